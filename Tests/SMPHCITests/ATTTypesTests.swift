import SMPHCI
import Testing

struct ATTTypesTests {
    @Test(arguments: [
        (UInt16(1), UInt16(0xFFFF), true), (0, 5, false), (6, 5, false), (5, 5, true),
    ])
    func aRangeIsValidFromOneAndNotBackwards(start: UInt16, end: UInt16, valid: Bool) {
        #expect(ATTHandleRange(start: start, end: end).isValid == valid)
    }

    @Test func aRangeHoldsBothEnds() {
        let range = ATTHandleRange(start: 5, end: 8)
        #expect(range.contains(5) && range.contains(8))
        #expect(!range.contains(4) && !range.contains(9))
        #expect(!ATTHandleRange(start: 8, end: 5).contains(6))
        #expect(range.description == "0x0005–0x0008")
    }

    @Test func findInformationEntriesGiveUUIDsInEitherFormat() {
        let short = ATTFindInformationData.uuid16([ATTHandleUUID16(handle: 8, uuid: 0x2902)])
        #expect(short.entries.map(\.uuid) == [.clientCharacteristicConfiguration])
        let long = ATTFindInformationData.uuid128([ATTHandleUUID128(handle: 7, uuid: .smpCharacteristic)])
        #expect(long.entries.map(\.handle) == [7])
    }
}
