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
}
