import SMPHCI
import Testing

struct HCIAdvertisingReportsTests {
    static let peer = BluetoothAddress("C4:F2:17:1A:1D:BB")!

    @Test func parsesBumblesLegacyReportAndWritesItBack() throws {
        let data = try bytes(BumbleVectors.advertisingDataSMP)
        let expected = HCI.LEAdvertisingReport(reports: [
            .init(
                eventType: .connectableUndirected,
                addressType: .randomDevice,
                address: Self.peer,
                data: data,
                rssi: -60
            ),
            .init(eventType: .scanResponse, addressType: .randomDevice, address: Self.peer, data: data, rssi: -61),
        ])
        #expect(try h4Event(BumbleVectors.leAdvertisingReport) == .leAdvertisingReport(expected))
        #expect(H4Encoder.encode(.event(expected.packet)) == (try bytes(BumbleVectors.leAdvertisingReport)))
        #expect(try expected.reports[0].advertisingData().localName == "Zephyr SMP")
        #expect(expected.reports[0].eventType.isConnectable)
        #expect(!expected.reports[1].eventType.isConnectable)
    }

    @Test func parsesBumblesExtendedReportAndWritesItBack() throws {
        let expected = HCI.LEExtendedAdvertisingReport(reports: [
            .init(
                eventType: .init(rawValue: 0x0013),
                addressType: .publicDevice,
                address: BluetoothAddress("00:1B:DC:07:32:E1")!,
                primaryPHY: 1,
                secondaryPHY: 0,
                advertisingSID: 0xFF,
                txPower: 127,
                rssi: -70,
                periodicAdvertisingInterval: 0,
                directAddressType: .publicDevice,
                directAddress: .zero,
                data: try bytes(BumbleVectors.advertisingDataMixed)
            )
        ])
        #expect(try h4Event(BumbleVectors.leExtendedAdvertisingReport) == .leExtendedAdvertisingReport(expected))
        #expect(H4Encoder.encode(.event(expected.packet)) == (try bytes(BumbleVectors.leExtendedAdvertisingReport)))
        let type = expected.reports[0].eventType
        #expect(type.isConnectable && type.isScannable && type.isLegacy && !type.isDirected && !type.isScanResponse)
        #expect(type.dataStatus == 0)
        #expect(try expected.reports[0].advertisingData().localName == "Thingy")
    }

    @Test func aReportWhoseDataOverrunsTheEventIsMalformed() throws {
        var parameters = Array(try bytes(BumbleVectors.leAdvertisingReport).dropFirst(3))
        // The first report's Data_Length (after count, type, address type, address) grows past the end.
        parameters[1 + 1 + 1 + 1 + 6] = 0xFF
        #expect(throws: HCIError(.malformedPacket)) {
            try HCIEvent(HCIEventPacket(code: .leMeta, parameters: parameters))
        }
    }

    @Test func moreReportsAnnouncedThanPresentIsMalformed() throws {
        var parameters = Array(try bytes(BumbleVectors.leExtendedAdvertisingReport).dropFirst(3))
        parameters[1] = 2
        #expect(throws: HCIError(.malformedPacket)) {
            try HCIEvent(HCIEventPacket(code: .leMeta, parameters: parameters))
        }
    }
}
