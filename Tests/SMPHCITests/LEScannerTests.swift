import SMPHCI
import Testing

struct LEScannerTests {
    /// The command an action sends, parsed as the type expected.
    static func sent<Command: HCICommand>(
        _ action: LEScanner.Action,
        _ type: Command.Type,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> Command {
        guard case .send(let packet) = action else {
            Issue.record("not a send: \(action)", sourceLocation: sourceLocation)
            throw HCIError(.protocolViolation)
        }
        return try packet.command(as: type)
    }

    /// A scanner driven to scanning (legacy), with the answers Bumble's controller gave.
    static func scanning(controller: ControllerInfo? = nil) throws -> LEScanner {
        var scanner = LEScanner(controller: try controller ?? GAP.controller())
        _ = scanner.start()
        _ = scanner.receive(try GAP.event(GAPVectors.bumbleScanParameters0))
        #expect(scanner.receive(try GAP.event(GAPVectors.bumbleScanEnable0)) == .scanning)
        return scanner
    }

    @Test func scansWithBumblesControllerAndReportsItsAdvertiserOnce() throws {
        var scanner = LEScanner(controller: try GAP.controller())
        let parameters = try Self.sent(scanner.start(), HCI.LESetScanParameters.self)
        #expect(parameters == .init(scanType: .active, interval: 0x60, window: 0x30, ownAddressType: .publicDevice))
        let enable = try Self.sent(
            scanner.receive(try GAP.event(GAPVectors.bumbleScanParameters0)),
            HCI.LESetScanEnable.self
        )
        #expect(enable == .init(enable: true, filterDuplicates: false))
        #expect(scanner.receive(try GAP.event(GAPVectors.bumbleScanEnable0)) == .scanning)

        var expected = DiscoveredPeripheral(address: GAP.advertiser, addressType: .randomDevice)
        expected.isConnectable = true
        expected.serviceUUIDs = [GAP.smpService]
        expected.rssi = -50
        expected.advertisingData = try bytes("020106110784aa6074528a8b86d34cb71d1ddc538d")
        #expect(scanner.receive(try GAP.event(GAPVectors.bumbleScanEnable1)) == .discovered([expected]))
        // Bumble's scan response repeats the advertising data, and the advertisement repeats:
        // nothing new, nothing reported.
        for hex in [GAPVectors.bumbleScanEnable2, GAPVectors.bumbleScanEnable3, GAPVectors.bumbleScanEnable4] {
            #expect(scanner.receive(try GAP.event(hex)) == .wait)
        }
        #expect(scanner.discovered.count == 1)
        #expect(scanner.discovered.first?.scanResponseData == expected.advertisingData)

        let disable = try Self.sent(scanner.stop(), HCI.LESetScanEnable.self)
        #expect(!disable.enable)
        #expect(scanner.receive(try GAP.event(GAPVectors.bumbleScanDisable0)) == .stopped)
    }

    @Test func aControllerWithExtendedScanningGetsTheExtendedCommands() throws {
        let random = GAP.address("C0:AA:BB:CC:DD:EE")
        var scanner = LEScanner(controller: try GAP.controller(extended: true, random: random), filterDuplicates: true)
        let parameters = try Self.sent(scanner.start(), HCI.LESetExtendedScanParameters.self)
        #expect(parameters.ownAddressType == .randomDevice)
        #expect(parameters.scans == [.init(phy: .le1M, scanType: .active, interval: 0x60, window: 0x30)])
        let enable = try Self.sent(
            scanner.receive(GAP.complete(.leSetExtendedScanParameters)),
            HCI.LESetExtendedScanEnable.self
        )
        #expect(enable == .init(enable: true, filterDuplicates: 1))
        #expect(scanner.receive(GAP.complete(.leSetExtendedScanEnable)) == .scanning)

        // Bumble's own extended report vector: a legacy ADV_IND with the mixed data.
        guard case .discovered(let found) = scanner.receive(try GAP.event(BumbleVectors.leExtendedAdvertisingReport))
        else {
            Issue.record("nothing discovered")
            return
        }
        #expect(found.count == 1)
        #expect(found.first?.address == GAP.address("00:1B:DC:07:32:E1"))
        #expect(found.first?.isConnectable == true)
        #expect(found.first?.localName == "Thingy")
        #expect(found.first?.hasCompleteLocalName == false)
        #expect(found.first?.txPower == -8)
        #expect(found.first?.rssi == -70)
        #expect(
            found.first?.serviceUUIDs == [BluetoothUUID(UInt16(0x180D)), BluetoothUUID(UInt16(0xFE59)), GAP.smpService]
        )

        let disable = try Self.sent(scanner.stop(), HCI.LESetExtendedScanEnable.self)
        #expect(disable == .init(enable: false, filterDuplicates: 0))
        #expect(scanner.receive(GAP.complete(.leSetExtendedScanEnable)) == .stopped)
    }

    @Test func aScanResponseNameIsMergedWithItsAdvertisementAndReportedAgain() throws {
        var scanner = try Self.scanning()
        let advertisement = GAP.report(
            .connectableUndirected,
            [ADStructure(type: .completeServiceUUIDs128, data: GAP.smpService.littleEndianBytes)]
        )
        guard case .discovered(let first) = scanner.receive(advertisement) else {
            Issue.record("not discovered")
            return
        }
        #expect(first.first?.localName == nil)
        let response = GAP.report(
            .scanResponse,
            [ADStructure(type: .completeLocalName, data: Array("Zephyr SMP".utf8))],
            rssi: -58
        )
        guard case .discovered(let second) = scanner.receive(response) else {
            Issue.record("the name learnt was not reported")
            return
        }
        #expect(second.count == 1)
        #expect(second.first?.localName == "Zephyr SMP")
        #expect(second.first?.hasCompleteLocalName == true)
        #expect(second.first?.serviceUUIDs == [GAP.smpService])
        #expect(second.first?.isConnectable == true)
        #expect(second.first?.rssi == -58)
        // The same again, and a shortened name after the complete one: nothing new.
        #expect(scanner.receive(response) == .wait)
        #expect(scanner.receive(advertisement) == .wait)
        let shortened = GAP.report(.scanResponse, [ADStructure(type: .shortenedLocalName, data: Array("Zeph".utf8))])
        #expect(scanner.receive(shortened) == .wait)
        #expect(scanner.discovered.first?.localName == "Zephyr SMP")
    }

    @Test func aNewServiceUUIDIsReportedAgain() throws {
        var scanner = try Self.scanning()
        _ = scanner.receive(
            GAP.report(.connectableUndirected, [ADStructure(type: .completeServiceUUIDs16, data: [0x0D, 0x18])])
        )
        let more = GAP.report(
            .scanResponse,
            [ADStructure(type: .completeServiceUUIDs128, data: GAP.smpService.littleEndianBytes)]
        )
        guard case .discovered(let found) = scanner.receive(more) else {
            Issue.record("the new UUID was not reported")
            return
        }
        #expect(found.first?.serviceUUIDs == [BluetoothUUID(UInt16(0x180D)), GAP.smpService])
    }

    @Test func theSameAddressOfAnotherTypeIsAnotherAdvertiser() throws {
        var scanner = try Self.scanning()
        let random = HCI.LEAdvertisingReport.Report(
            eventType: .connectableUndirected,
            addressType: .randomDevice,
            address: GAP.advertiser,
            data: [],
            rssi: -40
        )
        var publicReport = random
        publicReport.addressType = .publicDevice
        guard
            case .discovered(let found) = scanner.receive(.leAdvertisingReport(.init(reports: [random, publicReport])))
        else {
            Issue.record("not discovered")
            return
        }
        #expect(found.map(\.addressType) == [.randomDevice, .publicDevice])
    }

    /// Data whose structures overrun it, or whose flags are two bytes.
    static let malformed: [[UInt8]] = [[0x05, 0x09, 0x41], [0x03, 0x01, 0x06, 0x06], [0xFF]]

    @Test(arguments: malformed)
    func malformedDataDoesNotStopTheScan(data: [UInt8]) throws {
        var scanner = try Self.scanning()
        let other = GAP.address("C0:00:00:00:00:99")
        let mixed = HCIEvent.leAdvertisingReport(
            .init(reports: [
                .init(
                    eventType: .connectableUndirected,
                    addressType: .randomDevice,
                    address: GAP.advertiser,
                    data: data,
                    rssi: -70
                ),
                .init(
                    eventType: .nonConnectableUndirected,
                    addressType: .randomDevice,
                    address: other,
                    data: AdvertisingData(structures: [ADStructure(type: .completeLocalName, data: Array("B".utf8))])
                        .encoded(),
                    rssi: -71
                ),
            ])
        )
        guard case .discovered(let found) = scanner.receive(mixed) else {
            Issue.record("nothing discovered")
            return
        }
        #expect(found.map(\.address) == [GAP.advertiser, other])
        #expect(found.first?.localName == nil)
        #expect(found.first?.isConnectable == true)
        #expect(found.first?.advertisingData == data)
        #expect(found.last?.localName == "B")
        // Good data later from the same advertiser is learnt.
        let good = GAP.report(.connectableUndirected, [ADStructure(type: .completeLocalName, data: Array("A".utf8))])
        guard case .discovered(let later) = scanner.receive(good) else {
            Issue.record("the good data was not reported")
            return
        }
        #expect(later.first?.localName == "A")
    }

    @Test func anIncompleteExtendedFragmentIsNotParsed() throws {
        var scanner = LEScanner(controller: try GAP.controller(extended: true))
        _ = scanner.start()
        _ = scanner.receive(GAP.complete(.leSetExtendedScanParameters))
        _ = scanner.receive(GAP.complete(.leSetExtendedScanEnable))
        let name = AdvertisingData(structures: [ADStructure(type: .completeLocalName, data: Array("Part".utf8))])
            .encoded()
        let fragment = HCI.LEExtendedAdvertisingReport.Report(
            eventType: .init(rawValue: 0x0021),  // connectable, data incomplete, more to come
            addressType: .randomDevice,
            address: GAP.advertiser,
            primaryPHY: 1,
            secondaryPHY: 2,
            advertisingSID: 1,
            txPower: 127,
            rssi: 127,
            periodicAdvertisingInterval: 0,
            directAddressType: .publicDevice,
            directAddress: .zero,
            data: name
        )
        guard case .discovered(let found) = scanner.receive(.leExtendedAdvertisingReport(.init(reports: [fragment])))
        else {
            Issue.record("the advertiser was not reported")
            return
        }
        #expect(found.first?.localName == nil)
        #expect(found.first?.rssi == nil)
        #expect(found.first?.txPower == nil)
    }

    /// Events that answer nothing a scanner awaits.
    static let foreign: [HCIEvent] = [
        GAP.complete(.reset),
        GAP.complete(.leSetScanEnable),
        GAP.complete(.leSetExtendedScanParameters),
        GAP.status(.leCreateConnection),
        GAP.complete(.noOperation),
        GAP.report(.connectableUndirected, [ADStructure(type: .completeLocalName, data: Array("early".utf8))]),
        GAP.connectionComplete(role: .central, peer: GAP.advertiser),
        .disconnectionComplete(.init(status: .success, connectionHandle: 1, reason: .remoteUserTerminatedConnection)),
    ]

    @Test(arguments: foreign)
    func staleAndForeignAnswersAreIgnored(event: HCIEvent) throws {
        var scanner = LEScanner(controller: try GAP.controller())
        _ = scanner.start()
        #expect(scanner.receive(event) == .wait)
        // Still waiting for the parameters' answer, which then moves it on.
        _ = try Self.sent(scanner.receive(GAP.complete(.leSetScanParameters)), HCI.LESetScanEnable.self)
        #expect(scanner.discovered.isEmpty)
    }

    /// How far the scanner gets before the refusal or the timeout: 0 parameters, 1 enable, 2 disable.
    static func drive(to step: Int) throws -> LEScanner {
        var scanner = LEScanner(controller: try GAP.controller())
        _ = scanner.start()
        if step >= 1 { _ = scanner.receive(GAP.complete(.leSetScanParameters)) }
        if step >= 2 {
            _ = scanner.receive(GAP.complete(.leSetScanEnable))
            _ = scanner.stop()
        }
        return scanner
    }

    @Test(arguments: [(0, HCIOpcode.leSetScanParameters), (1, .leSetScanEnable), (2, .leSetScanEnable)])
    func aRefusedCommandFailsWithItsStatus(step: Int, opcode: HCIOpcode) throws {
        var scanner = try Self.drive(to: step)
        guard case .failed(let error) = scanner.receive(GAP.complete(opcode, .commandDisallowed)) else {
            Issue.record("not failed")
            return
        }
        #expect(error.code == .commandFailed)
        #expect(error.status == .commandDisallowed)
        #expect(error.message.contains(step == 0 ? "LE Set Scan Parameters" : "LE Set Scan Enable"))
        #expect(scanner.receive(GAP.report(.connectableUndirected, [])) == .wait)
    }

    @Test(arguments: [0, 1, 2])
    func anUnansweredCommandFails(step: Int) throws {
        var scanner = try Self.drive(to: step)
        #expect(scanner.timedOut() == .failed(HCIError(.timeout)))
    }

    @Test func aTimeoutWhileScanningChangesNothing() throws {
        var scanner = try Self.scanning()
        #expect(scanner.timedOut() == .wait)
        guard case .discovered = scanner.receive(GAP.report(.connectableUndirected, [])) else {
            Issue.record("no longer scanning")
            return
        }
    }

    @Test func reportsAfterStoppingAreIgnored() throws {
        var scanner = try Self.scanning()
        _ = scanner.stop()
        #expect(scanner.receive(GAP.report(.connectableUndirected, [])) == .wait)
        #expect(scanner.receive(GAP.complete(.leSetScanEnable)) == .stopped)
        #expect(scanner.receive(GAP.report(.connectableUndirected, [])) == .wait)
        #expect(scanner.discovered.isEmpty)
    }

    @Test func stoppingWhileSettingParametersNeverEnables() throws {
        var scanner = LEScanner(controller: try GAP.controller())
        _ = scanner.start()
        #expect(scanner.stop() == .wait)
        #expect(scanner.receive(GAP.complete(.leSetScanParameters)) == .stopped)
    }

    @Test func stoppingWhileEnablingDisablesOnceEnabled() throws {
        var scanner = LEScanner(controller: try GAP.controller())
        _ = scanner.start()
        _ = scanner.receive(GAP.complete(.leSetScanParameters))
        #expect(scanner.stop() == .wait)
        let disable = try Self.sent(scanner.receive(GAP.complete(.leSetScanEnable)), HCI.LESetScanEnable.self)
        #expect(!disable.enable)
        #expect(scanner.receive(GAP.complete(.leSetScanEnable)) == .stopped)
    }

    @Test func stoppingBeforeStartingIsStopped() throws {
        var scanner = LEScanner(controller: try GAP.controller())
        #expect(scanner.stop() == .stopped)
        #expect(scanner.start() == .wait)
    }
}
