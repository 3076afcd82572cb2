import SMPHCI
import SMPTestSupport
import Testing

@testable import SMPHCIHost

/// ACL flow control against a controller that frees its buffers late, or claims to free buffers
/// the host never filled: the host never has more packets in the controller than it announced.
@Suite(.timeLimit(.minutes(5)))
struct HCIConnectionFlowTests {
    static func completed(_ handle: UInt16, _ count: UInt16) -> HCIEventPacket {
        HCI.NumberOfCompletedPackets(completed: [.init(connectionHandle: handle, count: count)]).packet
    }

    /// Waits until the host has sent `count` ACL packets in all.
    static func aclPackets(_ fake: FakeController, _ count: Int) async throws -> Int? {
        try await RealIO.poll(timeout: .seconds(60)) {
            let sent = fake.received.compactMap(\.acl).count
            return sent >= count ? sent : nil
        }
    }

    @Test func theHostHoldsBackWhatTheControllerHasNoRoomFor() async throws {
        let fake = try FakeController(peer: HCIConnectionTests.peer)
        defer { fake.stop() }
        let (host, connection) = try await HCIConnectionTests.connect(fake)
        fake.completesPackets(false)
        // 8 fragments of at most 27 bytes; the controller holds 4.
        let write: [UInt8] = [0x52, 0x07, 0x00] + Array(repeating: 0x5A, count: 200)
        try await connection.sendATT(write)
        let capacity = Int(FakeControllerState.aclCount)
        #expect(try await Self.aclPackets(fake, capacity) == capacity)
        #expect(await connection.isBacklogged)
        // A confused controller frees buffers of a handle with nothing in flight: no room comes of it.
        fake.send(Self.completed(0x0099, 10))
        // One real buffer freed: exactly one more packet.
        fake.send(Self.completed(FakePeer.handle, 1))
        #expect(try await Self.aclPackets(fake, capacity + 1) == capacity + 1)
        #expect(await connection.isBacklogged)
        // More freed than is in flight: the rest goes, and the host is no longer backlogged.
        fake.send(Self.completed(FakePeer.handle, 100))
        try await connection.waitForRoom()
        #expect(!(await connection.isBacklogged))
        let sent = try await fake.pdu { $0.channelID == .att && $0.payload.first == 0x52 }
        #expect(sent?.payload == write)
        #expect(fake.received.compactMap(\.acl).count == 8)
        await host.close()
    }

    /// A disconnection frees the buffers its packets held, and a writer waiting for room (or
    /// writing later) learns the controller's reason (found here: it learnt only "gone").
    @Test func aDisconnectionEndsTheWaitForRoom() async throws {
        let fake = try FakeController(peer: HCIConnectionTests.peer)
        defer { fake.stop() }
        let (host, connection) = try await HCIConnectionTests.connect(fake)
        fake.completesPackets(false)
        try await connection.sendATT([0x52, 0x07, 0x00] + Array(repeating: 0x5A, count: 200))
        _ = try await Self.aclPackets(fake, Int(FakeControllerState.aclCount))
        fake.send(HCI.DisconnectionComplete(connectionHandle: FakePeer.handle, reason: .connectionTimeout).packet)
        let error = await #expect(throws: HCIDisconnection.self) { try await connection.waitForRoom() }
        #expect(error?.reason == .connectionTimeout)
        #expect(!(await connection.isBacklogged))
        // A later write says why, too.
        let write = await #expect(throws: HCIDisconnection.self) { try await connection.sendATT([0x52, 0x07, 0x00]) }
        #expect(write?.reason == .connectionTimeout)
        await host.close()
    }
}
