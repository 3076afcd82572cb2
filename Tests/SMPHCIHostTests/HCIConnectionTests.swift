import SMPHCI
import SMPTestSupport
import Testing

@testable import SMPHCIHost

/// One connection's ACL data and L2CAP: malformed data from the peer costs that data, not the
/// connection; LE signalling is answered as the specification says.
@Suite(.timeLimit(.minutes(5)))
struct HCIConnectionTests {
    static let peer = FakePeer(name: "fake-smp")
    /// A notification of the SMP characteristic, as a peer sends one.
    static let notification: [UInt8] = [0x1B, 0x07, 0x00, 0xAA, 0xBB]

    /// A host on the fake, connected to its peer.
    static func connect(_ fake: FakeController) async throws -> (HCIHost, HCIConnection) {
        let host = try await HCIHostBringUpTests.open(fake)
        let connection = try await host.connect(to: peer.address, type: .randomDevice, timeout: .seconds(60))
        return (host, connection)
    }

    /// The first ATT PDU the connection delivers.
    static func firstPDU(_ connection: HCIConnection) async throws -> [UInt8]? {
        for try await pdu in connection.attPDUs { return pdu }
        return nil
    }

    static func acl(_ boundary: HCIACLDataPacket.PacketBoundary, _ data: [UInt8], handle: UInt16 = FakePeer.handle)
        -> [UInt8]
    {
        H4Encoder.encode(.acl(HCIACLDataPacket(connectionHandle: handle, packetBoundary: boundary, data: data)))
    }

    @Test func aConnectionCarriesATTBothWays() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let (host, connection) = try await Self.connect(fake)
        #expect(connection.handle == FakePeer.handle)
        #expect(connection.role == .central)
        #expect(connection.peer == Self.peer.address)
        // Longer than the controller's 27-byte buffers: the host cuts it, the peer reassembles.
        let write: [UInt8] = [0x52, 0x07, 0x00] + Array(0..<40)
        try await connection.sendATT(write)
        let sent = try await fake.pdu { $0.channelID == .att && $0.payload.first == 0x52 }
        #expect(sent?.payload == write)
        fake.send(L2CAPPDU(channelID: .att, payload: Self.notification))
        #expect(try await Self.firstPDU(connection) == Self.notification)
        await host.close()
    }

    static let malformedData: [(String, [UInt8])] = [
        ("a continuing fragment with no start", acl(.continuing, [0x01, 0x02, 0x03])),
        ("data past the L2CAP PDU's end", acl(.firstFlushable, [0x01, 0x00, 0x04, 0x00, 0x1B, 0xEE, 0xEE])),
        (
            "an L2CAP PDU longer than the host accepts",
            L2CAPPDU(channelID: .att, payload: [0x1B, 0x07, 0x00] + Array(repeating: 0x55, count: 597))
                .fragments(connectionHandle: FakePeer.handle, maximumDataLength: 27)
                .flatMap { H4Encoder.encode(.acl(FakeController.controllerToHost($0))) }
        ),
        (
            "ACL data for another handle",
            acl(.firstFlushable, [0x03, 0x00, 0x04, 0x00, 0x1B, 0x07, 0x00], handle: 0x0041)
        ),
        ("an L2CAP PDU on a channel the host does not serve", acl(.firstFlushable, [0x01, 0x00, 0x40, 0x00, 0x00])),
        ("an empty ACL packet", acl(.firstFlushable, [])),
    ]

    /// The malformed data first, then a notification: the notification is the first PDU the
    /// connection delivers, so the data was dropped and the connection went on.
    @Test(arguments: malformedData)
    func malformedACLDataIsDroppedAndTheConnectionGoesOn(_ what: String, _ bytes: [UInt8]) async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let (host, connection) = try await Self.connect(fake)
        fake.send(bytes)
        fake.send(L2CAPPDU(channelID: .att, payload: Self.notification))
        #expect(try await Self.firstPDU(connection) == Self.notification, "after \(what)")
        #expect(await host.isUsable)
        await host.close()
    }

    static let signalling: [(String, [UInt8], [UInt8])] = [
        (
            "a parameter update within the ranges is accepted",
            [0x12, 0x07, 0x08, 0x00, 0x18, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01],
            [0x13, 0x07, 0x02, 0x00, 0x00, 0x00]
        ),
        (
            "a parameter update outside them is rejected",
            [0x12, 0x08, 0x08, 0x00, 0x01, 0x00, 0x28, 0x00, 0x00, 0x00, 0xF4, 0x01],
            [0x13, 0x08, 0x02, 0x00, 0x01, 0x00]
        ),
        (
            "a parameter update too short is not understood", [0x12, 0x09, 0x02, 0x00, 0x18, 0x00],
            [0x01, 0x09, 0x02, 0x00, 0x00, 0x00]
        ),
        ("an unknown request is not understood", [0x16, 0x0A, 0x00, 0x00], [0x01, 0x0A, 0x02, 0x00, 0x00, 0x00]),
        (
            "a header whose length lies is not understood", [0x12, 0x0B, 0x40, 0x00],
            [0x01, 0x0B, 0x02, 0x00, 0x00, 0x00]
        ),
    ]

    /// A response nobody asked for comes first: it must get no answer (no reject loops), so the
    /// first signalling PDU the host sends answers the request.
    @Test(arguments: signalling)
    func leSignallingIsAnswered(_ what: String, _ request: [UInt8], _ answer: [UInt8]) async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let (host, _) = try await Self.connect(fake)
        fake.send(L2CAPPDU(channelID: .leSignalling, payload: [0x13, 0x05, 0x02, 0x00, 0x00, 0x00]))
        fake.send(L2CAPPDU(channelID: .leSignalling, payload: request))
        let sent = try await fake.pdu { $0.channelID == .leSignalling }
        #expect(sent?.payload == answer, "\(what)")
        // Sent to the peer's connection, as a first non-flushable fragment.
        let packet = fake.received.compactMap(\.acl).last
        #expect(packet?.connectionHandle == FakePeer.handle)
        await host.close()
    }

    @Test func theControllerGoingAwayEndsTheConnectionWithItsError() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let (host, connection) = try await Self.connect(fake)
        fake.closeConnection()
        let error = await #expect(throws: HCIError.self) { _ = try await Self.firstPDU(connection) }
        #expect(error?.message.contains("closed the connection") == true, "\(String(describing: error))")
        await #expect(throws: HCIError.self) { try await connection.sendATT([0x52, 0x07, 0x00]) }
        #expect(await !host.isUsable)
    }

    @Test func aDisconnectionEndsTheConnectionWithTheReason() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let (host, connection) = try await Self.connect(fake)
        fake.send(HCI.DisconnectionComplete(connectionHandle: FakePeer.handle, reason: .connectionTimeout).packet)
        let error = await #expect(throws: HCIDisconnection.self) { _ = try await Self.firstPDU(connection) }
        #expect(error?.reason == .connectionTimeout)
        #expect(error?.connectionHandle == FakePeer.handle)
        #expect(await host.isUsable)
        await host.close()
    }
}
