import Foundation
import SMPCBOR
import SMPTestSupport
import Testing

struct CBORReaderStreamingTests {
    @Test func readsAMapItemByItem() throws {
        var reader = CBORReader(TestBytes.hex("a3 636f6666 1903e8 6464617461 43010203 6475706720 f5"))
        #expect(try reader.readMapHeader() == 3)
        #expect(try reader.readText() == "off")
        #expect(try reader.readUnsigned() == 1000)
        #expect(try reader.readText() == "data")
        #expect(try reader.readByteString() == Data([1, 2, 3]))
        #expect(try reader.readText() == "upg ")
        #expect(try reader.readBool())
        #expect(reader.isAtEnd)
    }

    @Test func indefiniteMapsAndStringsAreRead() throws {
        var reader = CBORReader(TestBytes.hex("bf 7f 616f 626666 ff 5f 4101 4102 ff ff"))
        #expect(try reader.readMapHeader() == nil)
        #expect(try reader.readBreakIfPresent() == false)
        #expect(try reader.readText() == "off")
        #expect(try reader.readByteString() == Data([1, 2]))
        #expect(try reader.readBreakIfPresent())
        #expect(reader.isAtEnd)
    }

    @Test func wrongTypesAreUnexpectedTypeAtTheirOffset() {
        var reader = CBORReader(TestBytes.hex("20"))
        #expect(throws: CBORError(.unexpectedType, at: 0)) { try reader.readUnsigned() }
        var text = CBORReader(TestBytes.hex("40"))
        #expect(throws: CBORError(.unexpectedType, at: 0)) { try text.readText() }
        var flag = CBORReader(TestBytes.hex("01"))
        #expect(throws: CBORError(.unexpectedType, at: 0)) { try flag.readBool() }
        var map = CBORReader(TestBytes.hex("80"))
        #expect(throws: CBORError(.unexpectedType, at: 0)) { try map.readMapHeader() }
    }

    @Test func lengthsBeyondTheInputAreRefusedBeforeReading() {
        var bytes = CBORReader(TestBytes.hex("5a ffffffff 00"))
        #expect(throws: CBORError(.lengthExceedsInput, at: 0)) { try bytes.readByteString() }
        var map = CBORReader(TestBytes.hex("b8 20 00"))
        #expect(throws: CBORError(.lengthExceedsInput, at: 0)) { try map.readMapHeader() }
    }

    @Test func skipValidatesWhatItSkips() {
        var reader = CBORReader(TestBytes.hex("62 c3 28"))
        #expect(throws: CBORError(.invalidUTF8, at: 0)) { try reader.skipValue() }
    }

    @Test func reservedAdditionalInformationIsRefused() {
        var reader = CBORReader(TestBytes.hex("1c"))
        #expect(throws: CBORError(.reservedAdditionalInfo, at: 0)) { try reader.readUnsigned() }
    }
}
