import Foundation
import SMPCBOR
import SMPTestSupport
import Testing

struct CBORWriterTests {
    @Test(arguments: [
        (UInt64(0), "00"), (23, "17"), (24, "1818"), (255, "18ff"), (256, "190100"), (65535, "19ffff"),
        (65536, "1a00010000"), (4_294_967_295, "1affffffff"), (4_294_967_296, "1b0000000100000000"),
    ])
    func unsignedIntegersUseTheShortestForm(_ value: UInt64, _ hex: String) {
        #expect(TestBytes.hex(CBORWriter.encode(.unsignedInt(value))) == hex)
    }

    @Test(arguments: [
        (Int64(-1), "20"), (-24, "37"), (-25, "3818"), (-256, "38ff"), (-257, "390100"),
        (Int64.min, "3b7fffffffffffffff"),
    ])
    func negativeIntegersUseTheShortestForm(_ value: Int64, _ hex: String) {
        #expect(TestBytes.hex(CBORWriter.encode(CBOR(value))) == hex)
    }

    @Test func mapsKeepInsertionOrder() {
        let map: CBOR = ["off": 0, "data": .byteString(Data([1])), "len": 1]
        #expect(TestBytes.hex(CBORWriter.encode(map)) == "a3636f66660064646174614101636c656e01")
    }

    @Test func canonicalSortsKeysByEncodedBytes() {
        // RFC 8949 §4.2.1: shorter encoded keys first, then bytewise; integers before text.
        let map: CBOR = ["data": 1, "off": 2, "a": 3, 10: 4, -1: 5, "sha": 6]
        let encoded = CBORWriter.encode(map, options: .init(canonical: true))
        let expected: CBOR = [10: 4, -1: 5, "a": 3, "off": 2, "sha": 6, "data": 1]
        #expect(encoded == CBORWriter.encode(expected))
    }

    @Test func lengthFirstDiffersFromBytewiseOnlyAcrossKeyLengths() {
        let map: CBOR = [.byteString(Data()): 1, 1000: 2, "a": 3]
        // Bytewise: 1903e8 < 40 < 6161. Length-first: 40 (1 byte) < 6161 (2 bytes) < 1903e8 (3 bytes).
        #expect(TestBytes.hex(CBORWriter.encode(map, options: .init(mapKeyOrder: .bytewise))) == "a31903e8024001616103")
        #expect(
            TestBytes.hex(CBORWriter.encode(map, options: .init(mapKeyOrder: .lengthFirst))) == "a340016161031903e802"
        )
    }

    @Test func canonicalAppliesToNestedMaps() {
        let map: CBOR = ["z": ["b": 1, "a": 2]]
        #expect(TestBytes.hex(CBORWriter.encode(map, options: .init(canonical: true))) == "a1617aa2616102616201")
    }

    @Test func simpleValuesUseOneOrTwoBytes() {
        #expect(CBORWriter.encode(.simple(19)) == [0xf3])
        #expect(CBORWriter.encode(.simple(32)) == [0xf8, 0x20])
    }

    @Test func floatsForcedToANarrowWidthRound() {
        #expect(TestBytes.hex(CBORWriter.encode(.float(CBORFloat(1.0 / 3.0, width: .half)))) == "f93555")
        #expect(TestBytes.hex(CBORWriter.encode(.float(CBORFloat(70000, width: .half)))) == "f97c00")
    }
}
