import SMPHCI
import Testing

struct AdvertisingDataTests {
    static let smpService = BluetoothUUID("8D53DC1D-1DB7-4CD3-868B-8A527460AA84")!

    @Test func readsZephyrsSMPAdvertisementAsBumbleBuiltIt() throws {
        let data = try AdvertisingData(bytes: try bytes(BumbleVectors.advertisingDataSMP))
        #expect(data.flags == 0x06)
        #expect(data.serviceUUIDs == [Self.smpService])
        #expect(data.localName == "Zephyr SMP")
        #expect(data.hasCompleteLocalName)
        #expect(data.txPowerLevel == nil)
        #expect(data.encoded() == (try bytes(BumbleVectors.advertisingDataSMP)))
    }

    @Test func readsEveryKindOfStructureBumbleWrote() throws {
        let data = try AdvertisingData(bytes: try bytes(BumbleVectors.advertisingDataMixed))
        #expect(data.flags == 0x05)
        #expect(data.serviceUUIDs == [BluetoothUUID(UInt16(0x180D)), BluetoothUUID(UInt16(0xFE59)), Self.smpService])
        #expect(data.localName == "Thingy")
        #expect(!data.hasCompleteLocalName)
        #expect(data.txPowerLevel == -8)
        #expect(data.manufacturerData.map(\.company) == [0x0059])
        #expect(data.manufacturerData.map(\.data) == [[0x01, 0x02, 0x03]])
        #expect(
            data.structures.map(\.type) == [
                .flags, .incompleteServiceUUIDs16, .incompleteServiceUUIDs128, .shortenedLocalName, .txPowerLevel,
                .manufacturerSpecificData,
            ]
        )
        #expect(data.encoded() == (try bytes(BumbleVectors.advertisingDataMixed)))
    }

    @Test func aZeroLengthEndsTheSignificantPart() throws {
        // The 31-byte legacy field padded with zeros, and bytes after a zero length ignored.
        let significant = try bytes(BumbleVectors.advertisingDataSMP)
        let padded = significant + [0x00, 0x05, 0xFF]
        #expect(try AdvertisingData(bytes: padded) == AdvertisingData(bytes: significant))
        #expect(try AdvertisingData(bytes: [0x00]).structures.isEmpty)
        #expect(try AdvertisingData(bytes: []).structures.isEmpty)
    }

    @Test(arguments: [
        [UInt8]([0x05, 0x09, 0x41]),  // claims 5, has 2
        [0x02, 0x01, 0x06, 0x03],  // a length byte and nothing after it
        [0x03, 0x01, 0x06, 0x00],  // flags of two bytes
        [0x04, 0x03, 0x0D, 0x18, 0x00],  // 16-bit UUIDs, 3 bytes
        [0x02, 0xFF, 0x59],  // manufacturer data without a whole company
        [0x01, 0x0A],  // TX power without a value
    ])
    func overrunsAndWrongSizesAreMalformed(data: [UInt8]) {
        #expect(throws: HCIError(.malformedAdvertisingData)) { try AdvertisingData(bytes: data) }
    }

    @Test func unknownTypesAreKept() throws {
        let data = try AdvertisingData(bytes: [0x03, 0x19, 0xC1, 0x03])
        #expect(data.structures == [ADStructure(type: ADType(rawValue: 0x19), data: [0xC1, 0x03])])
    }

    @Test func aNameInInvalidUTF8IsRepairedNotRefused() throws {
        let data = try AdvertisingData(bytes: [0x03, 0x09, 0x41, 0xFF])
        #expect(data.localName == "A\u{FFFD}")
    }
}
