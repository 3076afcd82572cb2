import Foundation
import SMPCBOR
import SMPTestSupport
import Testing

/// Malformed input gives a specific error with the byte offset, never a trap or a huge allocation.
struct CBORReaderTests {
    struct Malformed: CustomTestStringConvertible, Sendable {
        var name: String
        var hex: String
        var code: CBORError.Code
        var offset: Int
        var testDescription: String { name }
    }

    static let malformed: [Malformed] = [
        Malformed(name: "empty input", hex: "", code: .truncated, offset: 0),
        Malformed(name: "truncated 2-byte argument", hex: "19 01", code: .truncated, offset: 0),
        Malformed(name: "truncated 8-byte argument", hex: "1b 00 00 00", code: .truncated, offset: 0),
        Malformed(name: "truncated array element", hex: "82 19 01", code: .truncated, offset: 1),
        Malformed(name: "truncated byte string", hex: "44 01 02", code: .lengthExceedsInput, offset: 0),
        Malformed(name: "truncated map value", hex: "a1 61 61", code: .truncated, offset: 3),
        Malformed(name: "reserved additional info 28", hex: "1c", code: .reservedAdditionalInfo, offset: 0),
        Malformed(name: "reserved additional info 29", hex: "3d", code: .reservedAdditionalInfo, offset: 0),
        Malformed(name: "reserved additional info 30", hex: "5e", code: .reservedAdditionalInfo, offset: 0),
        Malformed(name: "indefinite unsigned integer", hex: "1f", code: .reservedAdditionalInfo, offset: 0),
        Malformed(name: "indefinite tag", hex: "df 01", code: .reservedAdditionalInfo, offset: 0),
        Malformed(name: "break outside indefinite item", hex: "ff", code: .unexpectedBreak, offset: 0),
        Malformed(name: "break inside definite array", hex: "82 01 ff", code: .unexpectedBreak, offset: 2),
        Malformed(name: "break after a map key", hex: "bf 61 61 ff", code: .unexpectedBreak, offset: 3),
        Malformed(name: "unterminated indefinite array", hex: "9f 01 02", code: .truncated, offset: 3),
        Malformed(name: "text chunk in byte string", hex: "5f 61 61 ff", code: .invalidIndefiniteChunk, offset: 1),
        Malformed(name: "nested indefinite chunk", hex: "7f 7f ff ff", code: .invalidIndefiniteChunk, offset: 1),
        Malformed(name: "invalid UTF-8", hex: "62 c3 28", code: .invalidUTF8, offset: 0),
        Malformed(name: "lone surrogate in UTF-8", hex: "63 ed a0 80", code: .invalidUTF8, offset: 0),
        Malformed(name: "invalid UTF-8 chunk", hex: "7f 61 ff ff", code: .invalidUTF8, offset: 1),
        Malformed(name: "two-byte simple below 32", hex: "f8 18", code: .invalidSimpleValue, offset: 0),
        Malformed(
            name: "huge byte string length",
            hex: "5b ff ff ff ff ff ff ff ff 00",
            code: .lengthExceedsInput,
            offset: 0
        ),
        Malformed(name: "huge array count", hex: "9b 00 00 00 ff ff ff ff ff", code: .lengthExceedsInput, offset: 0),
        Malformed(name: "map count beyond input", hex: "a3 01 02 03 04", code: .lengthExceedsInput, offset: 0),
        Malformed(name: "duplicate map key", hex: "a2 61 61 01 61 61 02", code: .duplicateMapKey, offset: 4),
        Malformed(name: "trailing bytes", hex: "01 02", code: .trailingBytes, offset: 1),
    ]

    @Test(arguments: malformed)
    func malformedInputIsASpecificError(_ sample: Malformed) {
        #expect(throws: CBORError(sample.code, at: sample.offset)) {
            try CBORReader.decode(TestBytes.hex(sample.hex))
        }
    }

    @Test func depthBombStopsAtTheLimit() {
        // 10 000 nested one-element arrays: a recursive reader without a limit would overflow the stack.
        let bomb = [UInt8](repeating: 0x81, count: 10_000) + [0x00]
        #expect(throws: CBORError(.nestingTooDeep, at: 64)) { try CBORReader.decode(bomb) }
        #expect(throws: CBORError(.nestingTooDeep, at: 3)) {
            try CBORReader.decode([0x81, 0x81, 0x81, 0x81, 0x00], limits: .init(maximumDepth: 3))
        }
        let indefiniteBomb = [UInt8](repeating: 0x9f, count: 5_000)
        #expect(throws: CBORError(.nestingTooDeep, at: 64)) { try CBORReader.decode(indefiniteBomb) }
    }

    @Test func nestingAtTheLimitIsAccepted() throws {
        let nested = [UInt8](repeating: 0x81, count: 64) + [0x00]
        var value = try CBORReader.decode(nested)
        var depth = 0
        while case .array(let inner) = value, let first = inner.first {
            value = first
            depth += 1
        }
        #expect(depth == 64)
    }

    @Test func duplicateKeysCanBeAllowed() throws {
        let value = try CBORReader.decode(TestBytes.hex("a2616101616102"), limits: .init(rejectDuplicateKeys: false))
        #expect(value["a"] == 1)
        #expect(value.mapValue?.count == 2)
    }

    @Test func duplicateKeysAreFoundInLargeMaps() {
        // Past 16 entries the reader switches to a set; the duplicate must still be caught.
        var writer = CBORWriter()
        writer.writeHead(major: 5, argument: 40)
        for index in 0..<39 {
            writer.write(CBOR(index))
            writer.write(.null)
        }
        writer.write(CBOR(7))
        writer.write(.null)
        #expect(throws: CBORError.self) { try CBORReader.decode(writer.bytes) }
    }

    /// RFC 8949 compares text keys by their bytes, without Unicode normalisation: "é" precomposed
    /// (`c3 a9`) and "e" + combining acute (`65 cc 81`) are two keys, not a duplicate, and each
    /// finds only its own value — in small maps and past the 16 entries where the reader keeps a
    /// set. Swift's `String` equality would call them equal.
    @Test(arguments: [0, 20])
    func keysDifferingOnlyInNormalisationAreDistinct(padding: Int) throws {
        let precomposed = "\u{e9}"
        let decomposed = "e\u{301}"
        #expect(precomposed == decomposed, "Swift's String equality is canonical equivalence")
        var writer = CBORWriter()
        writer.writeHead(major: 5, argument: UInt64(padding + 2))
        for index in 0..<padding {
            writer.write(CBOR(index))
            writer.write(.null)
        }
        writer.write(.textString(precomposed))
        writer.write(1)
        writer.write(.textString(decomposed))
        writer.write(2)
        #expect(Array(writer.bytes.suffix(9)) == [0x62, 0xc3, 0xa9, 0x01, 0x63, 0x65, 0xcc, 0x81, 0x02])
        let map = try #require(try CBORReader.decode(writer.bytes).mapValue)
        #expect(map.count == padding + 2)
        #expect(map[precomposed] == 1)
        #expect(map[decomposed] == 2)
        #expect(CBOR.textString(precomposed) != CBOR.textString(decomposed))
        #expect(Set([CBOR.textString(precomposed), .textString(decomposed)]).count == 2)
        // The same bytes twice are still a duplicate.
        #expect(throws: CBORError(.duplicateMapKey, at: 5)) {
            try CBORReader.decode(TestBytes.hex("a2 62c3a9 01 62c3a9 02"))
        }
    }

    /// Codable lookups match keys by bytes too: a decomposed key does not answer for a field
    /// named with the precomposed spelling.
    @Test func codableKeysAreMatchedByBytes() throws {
        struct Accented: Decodable, Equatable {
            var value: Int?
            enum CodingKeys: String, CodingKey { case value = "\u{e9}" }
        }
        let decomposed = try CBORDecoder().decode(Accented.self, from: TestBytes.hex("a1 63 65cc81 05"))
        #expect(decomposed == Accented(value: nil))
        let precomposed = try CBORDecoder().decode(Accented.self, from: TestBytes.hex("a1 62 c3a9 05"))
        #expect(precomposed == Accented(value: 5))
    }

    @Test func zephyrIndefiniteErrorMapDecodes() throws {
        // An observed Zephyr reply: `bf 62 72 63 08 ff` = {"rc": 8} as an indefinite map.
        #expect(try CBORReader.decode(TestBytes.hex("bf62726308ff")) == ["rc": 8])
    }

    @Test func readerStreamsSeveralItems() throws {
        var reader = CBORReader(TestBytes.hex("01 6161 a0"))
        #expect(try reader.readValue() == 1)
        #expect(try reader.readValue() == "a")
        #expect(try reader.readValue() == [:])
        #expect(reader.isAtEnd)
    }

    @Test func randomBytesNeverTrap() {
        var generator = TestBytes.SeededGenerator(seed: 0x5eed)
        var decoded = 0
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...24, using: &generator)
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if (try? CBORReader.decode(bytes)) != nil { decoded += 1 }
        }
        // Both outcomes occur; what matters is that none of the 20 000 inputs crashed.
        #expect(decoded > 0 && decoded < 20_000)
    }
}
