import SMPHCI
import SMPTestSupport
import Testing

@testable import SMPHCIHost

/// Malformed events and packets once the controller is up: a malformed event is one event, so
/// the host drops it and goes on; bytes that lose the stream's framing end the controller with
/// an error that says so.
@Suite(.timeLimit(.minutes(5)))
struct HCIHostEventTests {
    static let peer = FakePeer(name: "fake-smp")

    /// Scans until the fake's peer is seen: the host still works.
    static func scanFindsThePeer(_ host: HCIHost) async throws {
        let seen = try await host.scan(for: .seconds(60)) { $0.localName == peer.name }
        #expect(seen.contains { $0.localName == peer.name && $0.address == peer.address })
    }

    static let malformedEvents: [(String, [UInt8])] = [
        ("an LE Meta event without a subevent code", [0x04, 0x3E, 0x00]),
        ("an advertising report announcing reports it does not hold", [0x04, 0x3E, 0x02, 0x02, 0x03]),
        ("a Disconnection Complete too short", [0x04, 0x05, 0x02, 0x00, 0x40]),
        ("a Number Of Completed Packets whose count overruns it", [0x04, 0x13, 0x01, 0x05]),
        ("a Command Complete without an opcode", [0x04, 0x0E, 0x01, 0x01]),
        ("a Command Status too short", [0x04, 0x0F, 0x02, 0x00, 0x01]),
        ("an LE Connection Complete too short", [0x04, 0x3E, 0x03, 0x01, 0x00, 0x40]),
    ]

    /// Whole and drip-fed: the host behaves the same however the bytes arrive.
    @Test(arguments: malformedEvents, [FakeDelivery.whole, .byteByByte, .randomSplits(seed: 3)])
    func aMalformedEventIsDroppedAndTheHostGoesOn(_ event: (String, [UInt8]), _ delivery: FakeDelivery) async throws {
        let (what, bytes) = event
        let fake = try FakeController(delivery: delivery, peer: Self.peer)
        defer { fake.stop() }
        let host = try await HCIHostBringUpTests.open(fake)
        fake.send(bytes)
        try await Self.scanFindsThePeer(host)
        #expect(await host.isUsable, "after \(what)")
        await host.close()
    }

    /// The same events in the middle of a scan: the scan still finds the peer.
    @Test func malformedEventsDuringAScanAreDropped() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        fake.answer(
            .leSetScanParameters,
            with: .raw(Self.malformedEvents.flatMap(\.1) + Self.complete(.leSetScanParameters))
        )
        let host = try await HCIHostBringUpTests.open(fake)
        try await Self.scanFindsThePeer(host)
        await host.close()
    }

    static func complete(_ opcode: HCIOpcode) -> [UInt8] {
        H4Encoder.encode(
            .event(HCI.CommandComplete(numHCICommandPackets: 1, opcode: opcode, returnParameters: [0]).packet)
        )
    }

    @Test func aByteThatIsNoPacketIndicatorEndsTheControllerWithThatError() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let host = try await HCIHostBringUpTests.open(fake)
        fake.send([0x09, 0x00, 0x00])
        let error = await #expect(throws: HCIError.self) { _ = try await host.scan(for: .seconds(60)) }
        #expect(error?.code == .unknownPacketIndicator)
        #expect(error?.message.contains("0x09") == true, "\(String(describing: error))")
        #expect(await !host.isUsable)
    }

    @Test func theControllerGoingAwayFailsTheProcedureRunning() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        fake.answer(.leSetScanEnable, with: .close)
        let host = try await HCIHostBringUpTests.open(fake)
        let error = await #expect(throws: HCIError.self) { _ = try await host.scan(for: .seconds(60)) }
        #expect(error?.message.contains("closed the connection") == true, "\(String(describing: error))")
        // The next procedure learns it at once.
        await #expect(throws: HCIError.self) { _ = try await host.scan(for: .seconds(60)) }
    }

    @Test func aScanCommandNeverAnsweredTimesOut() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        fake.answer(.leSetScanParameters, with: .silence)
        let host = try await HCIHostBringUpTests.open(fake, commandTimeout: .seconds(1))
        let error = await #expect(throws: HCIError.self) { _ = try await host.scan(for: .seconds(60)) }
        #expect(error?.code == .timeout, "\(String(describing: error))")
        await host.close()
    }

    /// ACL data for a handle with no connection is ignored: nothing to route it to.
    @Test func aclDataForNoConnectionIsIgnored() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let host = try await HCIHostBringUpTests.open(fake)
        fake.send(
            H4Encoder.encode(
                .acl(
                    HCIACLDataPacket(
                        connectionHandle: 0x0123,
                        packetBoundary: .firstFlushable,
                        data: [0xFF, 0xFF, 0x04]
                    )
                )
            )
        )
        fake.send(L2CAPPDU(channelID: .att, payload: [0x1B, 0x07, 0x00]), handle: 0x0124)
        try await Self.scanFindsThePeer(host)
        await host.close()
    }
}
