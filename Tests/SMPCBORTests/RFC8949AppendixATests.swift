import Foundation
import SMPCBOR
import SMPTestSupport
import Testing

/// Every example of RFC 8949 Appendix A: the bytes decode to the value the RFC's diagnostic
/// notation names, and the value re-encodes to the RFC's bytes (for indefinite-length examples,
/// to the definite form; their indefinite bytes are rebuilt with the writer's streaming calls).
struct RFC8949AppendixATests {
    struct Vector: CustomTestStringConvertible, Sendable {
        var hex: String
        var value: CBOR
        /// The definite-length bytes a value re-encodes to when the input was indefinite.
        var definiteHex: String?
        var testDescription: String { hex }
    }

    static func f(_ value: Double, _ width: CBORFloat.Width) -> CBOR { .float(CBORFloat(value, width: width)) }
    static func bytes(_ hex: String) -> CBOR { .byteString(Data(TestBytes.hex(hex))) }
    static let oneTo25: [CBOR] = (1...25).map { CBOR($0) }

    static let vectors: [Vector] = [
        Vector(hex: "00", value: 0),
        Vector(hex: "01", value: 1),
        Vector(hex: "0a", value: 10),
        Vector(hex: "17", value: 23),
        Vector(hex: "1818", value: 24),
        Vector(hex: "1819", value: 25),
        Vector(hex: "1864", value: 100),
        Vector(hex: "1903e8", value: 1000),
        Vector(hex: "1a000f4240", value: 1_000_000),
        Vector(hex: "1b000000e8d4a51000", value: 1_000_000_000_000),
        Vector(hex: "1bffffffffffffffff", value: .unsignedInt(UInt64.max)),
        Vector(hex: "c249010000000000000000", value: .tagged(2, bytes("010000000000000000"))),
        Vector(hex: "3bffffffffffffffff", value: .negativeInt(UInt64.max)),
        Vector(hex: "c349010000000000000000", value: .tagged(3, bytes("010000000000000000"))),
        Vector(hex: "20", value: -1),
        Vector(hex: "29", value: -10),
        Vector(hex: "3863", value: -100),
        Vector(hex: "3903e7", value: -1000),
        Vector(hex: "f90000", value: f(0.0, .half)),
        Vector(hex: "f98000", value: f(-0.0, .half)),
        Vector(hex: "f93c00", value: f(1.0, .half)),
        Vector(hex: "fb3ff199999999999a", value: f(1.1, .double)),
        Vector(hex: "f93e00", value: f(1.5, .half)),
        Vector(hex: "f97bff", value: f(65504.0, .half)),
        Vector(hex: "fa47c35000", value: f(100000.0, .single)),
        Vector(hex: "fa7f7fffff", value: f(3.4028234663852886e+38, .single)),
        Vector(hex: "fb7e37e43c8800759c", value: f(1.0e+300, .double)),
        Vector(hex: "f90001", value: f(5.960464477539063e-8, .half)),
        Vector(hex: "f90400", value: f(0.00006103515625, .half)),
        Vector(hex: "f9c400", value: f(-4.0, .half)),
        Vector(hex: "fbc010666666666666", value: f(-4.1, .double)),
        Vector(hex: "f97c00", value: f(.infinity, .half)),
        Vector(hex: "f97e00", value: f(.nan, .half)),
        Vector(hex: "f9fc00", value: f(-.infinity, .half)),
        Vector(hex: "fa7f800000", value: f(.infinity, .single)),
        Vector(hex: "fa7fc00000", value: f(.nan, .single)),
        Vector(hex: "faff800000", value: f(-.infinity, .single)),
        Vector(hex: "fb7ff0000000000000", value: f(.infinity, .double)),
        Vector(hex: "fb7ff8000000000000", value: f(.nan, .double)),
        Vector(hex: "fbfff0000000000000", value: f(-.infinity, .double)),
        Vector(hex: "f4", value: false),
        Vector(hex: "f5", value: true),
        Vector(hex: "f6", value: .null),
        Vector(hex: "f7", value: .undefined),
        Vector(hex: "f0", value: .simple(16)),
        Vector(hex: "f8ff", value: .simple(255)),
        Vector(hex: "c074323031332d30332d32315432303a30343a30305a", value: .tagged(0, "2013-03-21T20:04:00Z")),
        Vector(hex: "c11a514b67b0", value: .tagged(1, 1_363_896_240)),
        Vector(hex: "c1fb41d452d9ec200000", value: .tagged(1, f(1_363_896_240.5, .double))),
        Vector(hex: "d74401020304", value: .tagged(23, bytes("01020304"))),
        Vector(hex: "d818456449455446", value: .tagged(24, bytes("6449455446"))),
        Vector(
            hex: "d82076687474703a2f2f7777772e6578616d706c652e636f6d",
            value: .tagged(32, "http://www.example.com")
        ),
        Vector(hex: "40", value: bytes("")),
        Vector(hex: "4401020304", value: bytes("01020304")),
        Vector(hex: "60", value: ""),
        Vector(hex: "6161", value: "a"),
        Vector(hex: "6449455446", value: "IETF"),
        Vector(hex: "62225c", value: "\"\\"),
        Vector(hex: "62c3bc", value: "\u{00fc}"),
        Vector(hex: "63e6b0b4", value: "\u{6c34}"),
        Vector(hex: "64f0908591", value: "\u{10151}"),
        Vector(hex: "80", value: []),
        Vector(hex: "83010203", value: [1, 2, 3]),
        Vector(hex: "8301820203820405", value: [1, [2, 3], [4, 5]]),
        Vector(hex: "98190102030405060708090a0b0c0d0e0f101112131415161718181819", value: .array(oneTo25)),
        Vector(hex: "a0", value: [:]),
        Vector(hex: "a201020304", value: [1: 2, 3: 4]),
        Vector(hex: "a26161016162820203", value: ["a": 1, "b": [2, 3]]),
        Vector(hex: "826161a161626163", value: ["a", ["b": "c"]]),
        Vector(
            hex: "a56161614161626142616361436164614461656145",
            value: ["a": "A", "b": "B", "c": "C", "d": "D", "e": "E"]
        ),
        Vector(hex: "5f42010243030405ff", value: bytes("0102030405"), definiteHex: "450102030405"),
        Vector(hex: "7f657374726561646d696e67ff", value: "streaming", definiteHex: "6973747265616d696e67"),
        Vector(hex: "9fff", value: [], definiteHex: "80"),
        Vector(hex: "9f018202039f0405ffff", value: [1, [2, 3], [4, 5]], definiteHex: "8301820203820405"),
        Vector(hex: "9f01820203820405ff", value: [1, [2, 3], [4, 5]], definiteHex: "8301820203820405"),
        Vector(hex: "83018202039f0405ff", value: [1, [2, 3], [4, 5]], definiteHex: "8301820203820405"),
        Vector(hex: "83019f0203ff820405", value: [1, [2, 3], [4, 5]], definiteHex: "8301820203820405"),
        Vector(
            hex: "9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff",
            value: .array(oneTo25),
            definiteHex: "98190102030405060708090a0b0c0d0e0f101112131415161718181819"
        ),
        Vector(hex: "bf61610161629f0203ffff", value: ["a": 1, "b": [2, 3]], definiteHex: "a26161016162820203"),
        Vector(hex: "826161bf61626163ff", value: ["a", ["b": "c"]], definiteHex: "826161a161626163"),
        Vector(
            hex: "bf6346756ef563416d7421ff",
            value: ["Fun": true, "Amt": -2],
            definiteHex: "a26346756ef563416d7421"
        ),
    ]

    @Test(arguments: vectors)
    func decodesToTheRFCValue(_ vector: Vector) throws {
        #expect(try CBORReader.decode(TestBytes.hex(vector.hex)) == vector.value)
    }

    @Test(arguments: vectors)
    func reencodesToTheRFCBytes(_ vector: Vector) throws {
        let decoded = try CBORReader.decode(TestBytes.hex(vector.hex))
        #expect(TestBytes.hex(CBORWriter.encode(decoded)) == (vector.definiteHex ?? vector.hex))
    }

    @Test func preferredFloatsPickTheShortestExactWidth() {
        let cases: [(Double, String)] = [
            (0.0, "f90000"), (-0.0, "f98000"), (1.0, "f93c00"), (1.1, "fb3ff199999999999a"), (1.5, "f93e00"),
            (65504.0, "f97bff"), (100000.0, "fa47c35000"), (3.4028234663852886e+38, "fa7f7fffff"),
            (1.0e+300, "fb7e37e43c8800759c"), (5.960464477539063e-8, "f90001"), (0.00006103515625, "f90400"),
            (-4.0, "f9c400"), (-4.1, "fbc010666666666666"), (.infinity, "f97c00"), (.nan, "f97e00"),
            (-.infinity, "f9fc00"),
        ]
        for (value, hex) in cases {
            #expect(TestBytes.hex(CBORWriter.encode(.float(CBORFloat(value)))) == hex, "\(value)")
        }
    }

    /// The streaming writer calls reproduce the RFC's indefinite-length encodings byte for byte.
    @Test func streamingWriterReproducesIndefiniteExamples() {
        var writer = CBORWriter()
        writer.writeIndefiniteMapStart()
        writer.write("a")
        writer.write(1)
        writer.write("b")
        writer.writeIndefiniteArrayStart()
        writer.write(2)
        writer.write(3)
        writer.writeBreak()
        writer.writeBreak()
        #expect(TestBytes.hex(writer.bytes) == "bf61610161629f0203ffff")

        var strings = CBORWriter()
        strings.writeIndefiniteByteStringStart()
        strings.write(Self.bytes("0102"))
        strings.write(Self.bytes("030405"))
        strings.writeBreak()
        strings.writeIndefiniteTextStringStart()
        strings.write("strea")
        strings.write("ming")
        strings.writeBreak()
        #expect(TestBytes.hex(strings.bytes) == "5f42010243030405ff" + "7f657374726561646d696e67ff")
    }
}
