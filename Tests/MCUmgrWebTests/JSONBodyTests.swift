import Foundation
import SMPCBOR
import Testing

@testable import MCUmgrWeb

@Suite struct JSONBodyTests {
    @Test func valuesBecomeTheirCBOR() throws {
        let body = try JSONBody.parse(#"{"z": [1, -2, 1.5, true, null], "a": "text", "big": 18446744073709551615}"#)
        let expected: CBOR = .map(
            CBORMap([
                .init(key: "a", value: "text"),
                .init(key: "big", value: .unsignedInt(UInt64.max)),
                .init(key: "z", value: .array([1, -2, .float(CBORFloat(1.5)), true, .null])),
            ])
        )
        #expect(body.cbor == expected)
    }

    @Test func whatIsNotJSONIsOneLineNamingTheField() {
        #expect(throws: WebError.self) { try JSONBody.parse("{d: 1") }
        do {
            _ = try JSONBody.parse("{d: 1")
        } catch {
            #expect("\(error)".hasPrefix("Body (JSON): not JSON"))
            #expect(!"\(error)".contains("\n"))
        }
    }

    /// `{"$hex": "…"}` is a byte string wherever it stands: a map's value, an array's element.
    @Test func aHexObjectIsAByteString() throws {
        let body = try JSONBody.parse(#"{"data": {"$hex": "0A 0b"}, "off": 0, "list": [{"$hex": ""}]}"#)
        let expected: CBOR = .map(
            CBORMap([
                .init(key: "data", value: .byteString(Data([0x0A, 0x0B]))),
                .init(key: "list", value: .array([.byteString(Data())])),
                .init(key: "off", value: 0),
            ])
        )
        #expect(body.cbor == expected)
    }

    @Test(arguments: [
        (#"{"data": {"$hex": "0g"}}"#, "Body (JSON): $hex '0g' is not hex bytes (pairs of 0-9 a-f)"),
        (#"{"data": {"$hex": "abc"}}"#, "Body (JSON): $hex 'abc' is not hex bytes (pairs of 0-9 a-f)"),
        (
            #"{"data": {"$hex": 10}}"#,
            #"Body (JSON): a byte string is an object with "$hex" alone and a string, e.g. {"$hex": "0a0b"}"#
        ),
        (
            #"{"data": {"$hex": "0a", "off": 1}}"#,
            #"Body (JSON): a byte string is an object with "$hex" alone and a string, e.g. {"$hex": "0a0b"}"#
        ),
    ])
    func aHexObjectThatIsNotBytesIsRefused(text: String, line: String) {
        #expect(throws: WebError.self) { try JSONBody.parse(text) }
        do {
            _ = try JSONBody.parse(text)
        } catch {
            #expect("\(error)" == line)
        }
    }
}
