import SMPHCI
import Testing

struct LEAdvertiserTests {
    static func advertiser(name: String = "swift-mcumgr", random: BluetoothAddress? = GAP.advertiser) throws
        -> LEAdvertiser
    {
        try LEAdvertiser(name: name, service: GAP.smpService, controller: try GAP.controller(random: random))
    }

    /// The packet an action sends.
    static func packet(_ action: LEAdvertiser.Action, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> HCICommandPacket
    {
        guard case .send(let packet) = action else {
            Issue.record("not a send: \(action)", sourceLocation: sourceLocation)
            throw HCIError(.protocolViolation)
        }
        return packet
    }

    /// An advertiser driven to advertising with Bumble's recorded answers.
    static func advertising() throws -> LEAdvertiser {
        var advertiser = try advertiser()
        _ = advertiser.start()
        _ = advertiser.receive(try GAP.event(GAPVectors.bumbleAdvertiserParameters0))
        _ = advertiser.receive(try GAP.event(GAPVectors.bumbleAdvertiserData0))
        _ = advertiser.receive(try GAP.event(GAPVectors.bumbleAdvertiserScanResponse0))
        #expect(advertiser.receive(try GAP.event(GAPVectors.bumbleAdvertiserEnable0)) == .advertising)
        return advertiser
    }

    @Test func sendsWhatBumblesAdvertiserWasGivenAndIsConnectedTo() throws {
        var advertiser = try Self.advertiser()
        // Byte for byte the commands that made Bumble's advertiser advertise in GAPVectors.
        let expected = [
            GAPVectors.leSetAdvertisingParameters, GAPVectors.leSetAdvertisingData,
            GAPVectors.leSetScanResponseData, GAPVectors.leSetAdvertisingEnable,
        ]
        let answers = [
            GAPVectors.bumbleAdvertiserParameters0, GAPVectors.bumbleAdvertiserData0,
            GAPVectors.bumbleAdvertiserScanResponse0,
        ]
        var action = advertiser.start()
        for (index, hex) in expected.enumerated() {
            #expect(H4Encoder.encode(.command(try Self.packet(action))) == (try bytes(hex)))
            action = index < answers.count ? advertiser.receive(try GAP.event(answers[index])) : .wait
        }
        #expect(advertiser.receive(try GAP.event(GAPVectors.bumbleAdvertiserEnable0)) == .advertising)
        // Bumble's peripheral side reports its own interval and timeout (10, 10), not the
        // central's (24, 400): the peripheral's event is taken as it is.
        let connection = LEConnection(
            handle: 0x0001,
            role: .peripheral,
            peerAddress: GAP.address("F0:00:00:00:00:02"),
            peerAddressType: .publicDevice,
            interval: 10,
            latency: 0,
            supervisionTimeout: 10
        )
        #expect(advertiser.receive(try GAP.event(GAPVectors.bumbleAdvertiserConnected0)) == .connected(connection))
    }

    @Test func withoutARandomAddressItAdvertisesThePublicOne() throws {
        var advertiser = try Self.advertiser(random: nil)
        let parameters = try Self.packet(advertiser.start()).command(as: HCI.LESetAdvertisingParameters.self)
        #expect(parameters.ownAddressType == .publicDevice)
        #expect(parameters.type == .connectableUndirected)
        #expect(parameters.channelMap == 0x07)
        #expect(parameters.intervalMin == 160)
    }

    @Test(arguments: [
        ("A", "A", true),
        (String(repeating: "n", count: 29), String(repeating: "n", count: 29), true),
        (String(repeating: "n", count: 30), String(repeating: "n", count: 29), false),
        // 14 two-byte characters fit in 28 bytes; the 15th would split.
        (String(repeating: "é", count: 20), String(repeating: "é", count: 14), false),
    ])
    func theNameIsCompleteOrShortenedToFit(name: String, advertised: String, complete: Bool) throws {
        var advertiser = try Self.advertiser(name: name)
        _ = advertiser.start()
        _ = advertiser.receive(GAP.complete(.leSetAdvertisingParameters))
        let packet = try Self.packet(advertiser.receive(GAP.complete(.leSetAdvertisingData)))
        let data = try AdvertisingData(bytes: try packet.command(as: HCI.LESetScanResponseData.self).data)
        #expect(data.localName == advertised)
        #expect(data.hasCompleteLocalName == complete)
        #expect(data.encoded().count <= 31)
    }

    @Test func theAdvertisingDataIsFlagsAndTheService() throws {
        var advertiser = try Self.advertiser()
        _ = advertiser.start()
        let packet = try Self.packet(advertiser.receive(GAP.complete(.leSetAdvertisingParameters)))
        let data = try AdvertisingData(bytes: try packet.command(as: HCI.LESetAdvertisingData.self).data)
        #expect(data.flags == 0x06)
        #expect(data.serviceUUIDs == [GAP.smpService])
        #expect(data.first(.completeServiceUUIDs128) != nil)
    }

    @Test func aSixteenBitServiceGoesInTheSixteenBitList() throws {
        var advertiser = try LEAdvertiser(
            name: "hr",
            service: BluetoothUUID(UInt16(0x180D)),
            controller: try GAP.controller()
        )
        _ = advertiser.start()
        let packet = try Self.packet(advertiser.receive(GAP.complete(.leSetAdvertisingParameters)))
        let data = try packet.command(as: HCI.LESetAdvertisingData.self).data
        // Flags, the 16-bit list, and the name, which fits beside them.
        #expect(data == [0x02, 0x01, 0x06, 0x03, 0x03, 0x0D, 0x18, 0x03, 0x09, 0x68, 0x72])
    }

    /// The complete name goes in the advertising data too when it fits beside the flags and the
    /// 128-bit UUID (8 bytes), so that a central knows the device from one packet; a longer one
    /// is only in the scan response.
    @Test(arguments: [("12345678", true), ("123456789", false)])
    func theNameIsAdvertisedWhenItFits(name: String, inAdvertisingData: Bool) throws {
        var advertiser = try Self.advertiser(name: name)
        _ = advertiser.start()
        let packet = try Self.packet(advertiser.receive(GAP.complete(.leSetAdvertisingParameters)))
        let data = try AdvertisingData(bytes: try packet.command(as: HCI.LESetAdvertisingData.self).data)
        #expect(data.serviceUUIDs == [GAP.smpService])
        #expect(data.localName == (inAdvertisingData ? name : nil))
    }

    @Test func anEmptyNameIsRejected() throws {
        #expect(throws: HCIError(.malformedAdvertisingData)) { try Self.advertiser(name: "") }
    }

    @Test func restartAfterTheConnectionEnablesAgain() throws {
        var advertiser = try Self.advertising()
        guard case .connected = advertiser.receive(GAP.connectionComplete(role: .peripheral, peer: GAP.absent)) else {
            Issue.record("not connected")
            return
        }
        let enable = try Self.packet(advertiser.restart()).command(as: HCI.LESetAdvertisingEnable.self)
        #expect(enable.enable)
        #expect(advertiser.receive(GAP.complete(.leSetAdvertisingEnable)) == .advertising)
    }

    @Test func stopDisables() throws {
        var advertiser = try Self.advertising()
        #expect(
            H4Encoder.encode(.command(try Self.packet(advertiser.stop())))
                == (try bytes(GAPVectors.leSetAdvertisingDisable))
        )
        #expect(advertiser.receive(GAP.complete(.leSetAdvertisingEnable)) == .stopped)
        #expect(advertiser.receive(GAP.connectionComplete(role: .peripheral, peer: GAP.absent)) == .wait)
        // And it may start again.
        _ = try Self.packet(advertiser.restart())
    }

    @Test func aConnectionRacingTheDisableIsKept() throws {
        var advertiser = try Self.advertising()
        _ = advertiser.stop()
        guard case .connected = advertiser.receive(GAP.connectionComplete(role: .peripheral, peer: GAP.absent)) else {
            Issue.record("the connection was lost")
            return
        }
        #expect(advertiser.receive(GAP.complete(.leSetAdvertisingEnable, .commandDisallowed)) == .wait)
    }

    @Test(arguments: [0, 1, 2, 3])
    func stoppingDuringTheStartEndsStopped(step: Int) throws {
        let opcodes: [HCIOpcode] = [
            .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable,
        ]
        var advertiser = try Self.advertiser()
        _ = advertiser.start()
        for opcode in opcodes.prefix(step) { _ = advertiser.receive(GAP.complete(opcode)) }
        #expect(advertiser.stop() == .wait)
        let action = advertiser.receive(GAP.complete(opcodes[step]))
        if step == 3 {
            // Enabled already: disabled again.
            #expect(try Self.packet(action).command(as: HCI.LESetAdvertisingEnable.self).enable == false)
            #expect(advertiser.receive(GAP.complete(.leSetAdvertisingEnable)) == .stopped)
        } else {
            #expect(action == .stopped)
        }
    }

    @Test(arguments: [0, 1, 2, 3])
    func aRefusalOrATimeoutAtAnyStepFails(step: Int) throws {
        let opcodes: [HCIOpcode] = [
            .leSetAdvertisingParameters, .leSetAdvertisingData, .leSetScanResponseData, .leSetAdvertisingEnable,
        ]
        var refused = try Self.advertiser()
        _ = refused.start()
        for opcode in opcodes.prefix(step) { _ = refused.receive(GAP.complete(opcode)) }
        var unanswered = refused
        guard case .failed(let error) = refused.receive(GAP.complete(opcodes[step], .invalidCommandParameters)) else {
            Issue.record("not failed")
            return
        }
        #expect(error.status == .invalidCommandParameters)
        #expect(unanswered.timedOut() == .failed(HCIError(.timeout)))
    }

    /// Events that are not this advertiser's.
    static let foreign: [HCIEvent] = [
        GAP.connectionComplete(role: .central, peer: GAP.absent),
        GAP.connectionComplete(HCIStatus(rawValue: 0x3C), role: .peripheral, peer: .zero),
        GAP.complete(.leSetScanParameters),
        GAP.complete(.leSetAdvertisingData),
        GAP.status(.leCreateConnection),
        GAP.report(.connectableUndirected, []),
    ]

    @Test(arguments: foreign)
    func eventsForOthersAreIgnored(event: HCIEvent) throws {
        var advertiser = try Self.advertiser()
        _ = advertiser.start()
        #expect(advertiser.receive(event) == .wait)
        _ = try Self.packet(advertiser.receive(GAP.complete(.leSetAdvertisingParameters)))
        var advertising = try Self.advertising()
        #expect(advertising.receive(event) == .wait)
        #expect(advertising.timedOut() == .wait)
    }
}
