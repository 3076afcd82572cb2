import Foundation
import SMPCBOR
import SMPTestSupport
import Testing

struct CBORCodableTests {
    struct Upload: Codable, Equatable {
        var image: Int?
        var length: Int?
        var offset: Int
        var sha: Data?
        var data: Data
        var upgrade: Bool?
        enum CodingKeys: String, CodingKey {
            case image
            case length = "len"
            case offset = "off"
            case sha, data, upgrade
        }
    }

    struct Everything: Codable, Equatable {
        var int8: Int8 = -8
        var int16: Int16 = -1600
        var int32: Int32 = -320_000
        var int64: Int64 = Int64.min
        var uint8: UInt8 = 255
        var uint16: UInt16 = 65535
        var uint32: UInt32 = 4_000_000_000
        var uint64: UInt64 = UInt64.max
        var double: Double = 1.1
        var float: Float = 1.5
        var text = "ü"
        var flag = true
        var bytes = Data([0, 1, 2])
        var integers: [UInt8] = [1, 2]
        var nested = ["k": [1, 2, 3]]
        var optional: String? = nil
        var nestedStruct: Upload? = Upload(image: nil, length: nil, offset: 5, sha: nil, data: Data([9]), upgrade: nil)
    }

    @Test func synthesisedKeysFollowDeclarationOrderAndOmitNil() throws {
        let upload = Upload(image: nil, length: 64, offset: 0, sha: nil, data: Data([1, 2]), upgrade: false)
        let bytes = try CBOREncoder().encodeToBytes(upload)
        #expect(TestBytes.hex(bytes) == "a4636c656e1840636f66660064646174614201026775706772616465f4")
    }

    @Test func roundTripsEveryPrimitive() throws {
        let value = Everything()
        let decoded = try CBORDecoder().decode(Everything.self, from: CBOREncoder().encode(value))
        #expect(decoded == value)
    }

    @Test func dataIsAByteStringAndUInt8ArrayIsAnArray() throws {
        let value = try CBOREncoder().encodeToValue(Everything())
        #expect(value["bytes"] == .byteString(Data([0, 1, 2])))
        #expect(value["integers"] == [1, 2])
        #expect(value["optional"] == nil)
    }

    @Test func unknownKeysAreIgnoredAndAnyOrderIsAccepted() throws {
        let wire: CBOR = ["data": .byteString(Data([7])), "future": ["x": 1], "off": 3, "rc": 0]
        let decoded = try CBORDecoder().decode(Upload.self, from: wire)
        #expect(decoded == Upload(image: nil, length: nil, offset: 3, sha: nil, data: Data([7]), upgrade: nil))
    }

    @Test func indefiniteMapsDecode() throws {
        // {"off": 3, "data": h'07'} as zcbor may send it: indefinite map.
        let bytes = TestBytes.hex("bf 636f666603 64646174614107 ff")
        #expect(try CBORDecoder().decode(Upload.self, from: bytes).offset == 3)
    }

    @Test func outOfRangeIntegersAreErrorsNotTruncations() {
        struct Small: Codable { var value: UInt8 }
        #expect(throws: DecodingError.self) { try CBORDecoder().decode(Small.self, from: ["value": 256] as CBOR) }
        #expect(throws: DecodingError.self) { try CBORDecoder().decode(Small.self, from: ["value": -1] as CBOR) }
        struct Signed: Codable { var value: Int8 }
        #expect(throws: Never.self) { try CBORDecoder().decode(Signed.self, from: ["value": -128] as CBOR) }
        #expect(throws: DecodingError.self) { try CBORDecoder().decode(Signed.self, from: ["value": -129] as CBOR) }
    }

    @Test func wrongTypesNameThePath() {
        do {
            _ = try CBORDecoder().decode(Upload.self, from: ["off": "three", "data": .byteString(Data())] as CBOR)
            Issue.record("decoding a text offset succeeded")
        } catch let DecodingError.typeMismatch(_, context) {
            #expect(context.codingPath.map(\.stringValue) == ["off"])
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func missingRequiredKeyIsKeyNotFound() {
        #expect(throws: DecodingError.self) { try CBORDecoder().decode(Upload.self, from: ["off": 1] as CBOR) }
    }

    @Test func malformedBytesSurfaceTheCBORError() {
        #expect(throws: CBORError(.truncated, at: 0)) { try CBORDecoder().decode(Upload.self, from: [UInt8]()) }
    }

    @Test func enumsAndNestedContainersRoundTrip() throws {
        enum Kind: String, Codable { case a, b }
        struct Holder: Codable, Equatable {
            var kind: Kind
            var list: [[String: Int]]
            var tuple: [Int?]
        }
        let holder = Holder(kind: .b, list: [["x": 1], [:]], tuple: [1, nil, 3])
        let bytes = try CBOREncoder().encodeToBytes(holder)
        #expect(try CBORDecoder().decode(Holder.self, from: bytes) == holder)
        #expect(try CBORReader.decode(bytes)["tuple"] == [1, .null, 3])
    }

    @Test func rawCBORValuesEmbedAndDecode() throws {
        struct Wrapper: Codable, Equatable { var any: CBOR }
        let wrapper = Wrapper(any: .tagged(107, ["k": .simple(99)]))
        let bytes = try CBOREncoder().encodeToBytes(wrapper)
        #expect(try CBORDecoder().decode(Wrapper.self, from: bytes) == wrapper)
    }

    @Test func tagsAreLookedThroughForTypedValues() throws {
        #expect(try CBORDecoder().decode(Int.self, from: .tagged(1, 42)) == 42)
    }

    @Test func canonicalEncoderOptionSortsKeys() throws {
        let upload = Upload(image: 0, length: 64, offset: 0, sha: nil, data: Data(), upgrade: nil)
        let bytes = try CBOREncoder(options: .init(canonical: true)).encodeToBytes(upload)
        // len, off, data, image: by encoded length first.
        #expect(TestBytes.hex(bytes) == "a4636c656e1840636f6666006464617461406569" + "6d61676500")
    }
}
