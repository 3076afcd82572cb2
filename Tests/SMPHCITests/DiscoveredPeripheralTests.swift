import SMPHCI
import Testing

struct DiscoveredPeripheralTests {
    @Test func aNewPeripheralKnowsOnlyItsAddress() {
        let peripheral = DiscoveredPeripheral(address: GAP.advertiser, addressType: .randomDevice)
        #expect(peripheral.address == GAP.advertiser)
        #expect(peripheral.addressType == .randomDevice)
        #expect(!peripheral.isConnectable)
        #expect(peripheral.localName == nil)
        #expect(!peripheral.hasCompleteLocalName)
        #expect(peripheral.serviceUUIDs.isEmpty)
        #expect(peripheral.rssi == nil)
        #expect(peripheral.txPower == nil)
        #expect(peripheral.advertisingData.isEmpty)
        #expect(peripheral.scanResponseData.isEmpty)
    }

    /// RSSI 127 and TX power 127 mean "not available" in reports; a TX Power Level AD structure
    /// wins over the extended report's TX_Power.
    @Test(arguments: [
        (Int8(127), Int8(127), [UInt8](), Int8?.none, Int8?.none),
        (-40, 4, [], -40, 4),
        (-40, 4, [0x02, 0x0A, 0xF8], -40, -8),
    ])
    func rssiAndTXPowerOfAnExtendedReport(
        rssi: Int8,
        txPower: Int8,
        data: [UInt8],
        expectedRSSI: Int8?,
        expectedTX: Int8?
    ) throws {
        var scanner = LEScanner(controller: try GAP.controller(extended: true))
        _ = scanner.start()
        _ = scanner.receive(GAP.complete(.leSetExtendedScanParameters))
        _ = scanner.receive(GAP.complete(.leSetExtendedScanEnable))
        let report = HCI.LEExtendedAdvertisingReport.Report(
            eventType: .init(rawValue: 0x0013),
            addressType: .randomDevice,
            address: GAP.advertiser,
            primaryPHY: 1,
            secondaryPHY: 0,
            advertisingSID: 0xFF,
            txPower: txPower,
            rssi: rssi,
            periodicAdvertisingInterval: 0,
            directAddressType: .publicDevice,
            directAddress: .zero,
            data: data
        )
        guard case .discovered(let found) = scanner.receive(.leExtendedAdvertisingReport(.init(reports: [report])))
        else {
            Issue.record("not discovered")
            return
        }
        #expect(found.first?.rssi == expectedRSSI)
        #expect(found.first?.txPower == expectedTX)
    }

    @Test func aScanResponseFirstLeavesTheAdvertiserNotConnectableUntilItsAdvertisement() throws {
        var scanner = try LEScannerTests.scanning()
        guard case .discovered(let first) = scanner.receive(GAP.report(.scanResponse, [])) else {
            Issue.record("not discovered")
            return
        }
        #expect(first.first?.isConnectable == false)
        guard case .discovered(let second) = scanner.receive(GAP.report(.connectableUndirected, [])) else {
            Issue.record("connectable not reported")
            return
        }
        #expect(second.first?.isConnectable == true)
    }
}
