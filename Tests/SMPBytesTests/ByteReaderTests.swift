import SMPBytes
import Testing

struct ByteReaderTests {
    let bytes: [UInt8] = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09]

    @Test func readsBothEndiannessesExplicitly() {
        var reader = ByteReader(bytes)
        #expect(reader.readInteger(endianness: .big, as: UInt16.self) == 0x0102)
        #expect(reader.readInteger(endianness: .little, as: UInt16.self) == 0x0403)
        #expect(reader.readInteger(endianness: .big, as: UInt32.self) == 0x0506_0708)
        #expect(reader.readableBytes == 1)
    }

    @Test func shortReadsReturnNilAndConsumeNothing() {
        var reader = ByteReader(bytes)
        reader.moveReaderIndex(forwardBy: 6)
        #expect(reader.readInteger(endianness: .big, as: UInt32.self) == nil)
        #expect(reader.readerIndex == 6)
        #expect(reader.readBytes(count: 4) == nil)
        #expect(reader.readBytes(count: -1) == nil)
        #expect(reader.readBytes(count: 3) == [7, 8, 9])
        #expect(reader.readByte() == nil)
    }

    @Test func peekAndGetDoNotMove() {
        let reader = ByteReader(bytes)
        #expect(reader.peekInteger(endianness: .little, as: UInt32.self) == 0x0403_0201)
        #expect(reader.getInteger(at: 7, endianness: .big, as: UInt16.self) == 0x0809)
        #expect(reader.getInteger(at: 8, endianness: .big, as: UInt16.self) == nil)
        #expect(reader.getInteger(at: -1, endianness: .big, as: UInt8.self) == nil)
        #expect(reader.readerIndex == 0)
    }

    @Test func signedIntegersKeepTheirSign() {
        var reader = ByteReader([0xff, 0xfe])
        #expect(reader.readInteger(endianness: .big, as: Int16.self) == -2)
    }

    @Test func movesAreBoundsChecked() {
        var reader = ByteReader(bytes)
        let beyondEnd = reader.moveReaderIndex(to: 10)
        let toEnd = reader.moveReaderIndex(to: 9)
        let pastEnd = reader.moveReaderIndex(forwardBy: 1)
        #expect(!beyondEnd && toEnd && !pastEnd)
        #expect(reader.readerIndex == 9)
    }
}

struct ByteWriterTests {
    @Test func writesAndBackPatches() {
        var writer = ByteWriter()
        #expect(writer.writeInteger(UInt16(0x0102), endianness: .big) == 2)
        #expect(writer.writeInteger(UInt32(0x0304_0506), endianness: .little) == 4)
        writer.writeBytes([0xaa])
        #expect(writer.bytes == [0x01, 0x02, 0x06, 0x05, 0x04, 0x03, 0xaa])
        let patched = writer.setInteger(UInt16(0xbeef), at: 0, endianness: .little)
        let outside = writer.setInteger(UInt16(0), at: 6, endianness: .big)
        #expect(patched && !outside)
        #expect(writer.bytes == [0xef, 0xbe, 0x06, 0x05, 0x04, 0x03, 0xaa])
    }
}

struct HexTests {
    @Test(
        arguments: [
            ("0a00 0009", [0x0a, 0x00, 0x00, 0x09]), ("0x0A:0x0b", [0x0a, 0x0b]),
            ("DE-AD be,ef", [0xde, 0xad, 0xbe, 0xef]),
            ("00", [0x00]), ("", []),
            // Line breaks of every kind: "\r\n" is one Character, so each must be matched by scalar.
            ("0a00\n0009\n", [0x0a, 0x00, 0x00, 0x09]), ("0a\r\n0b\r", [0x0a, 0x0b]),
        ] as [(String, [UInt8])]
    )
    func parsesLeniently(_ text: String, _ expected: [UInt8]) {
        #expect(Hex.decode(text) == expected)
    }

    @Test(arguments: ["0", "zz", "0g", "abc"])
    func rejectsNonHex(_ text: String) {
        #expect(Hex.decode(text) == nil)
    }

    @Test func encodesLowercase() {
        #expect(Hex.encode([0xDE, 0x01]) == "de01")
    }
}
