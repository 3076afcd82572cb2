import SMPHCI
import SMPLink
import SMPTestSupport
import Testing

@testable import SMPHCIHost

/// The central end to end on the fake: find, connect, GATT setup against SMPHCI's GATT server
/// behind the fake's radio; and every way the peer can break the setup, each a clear
/// `.connectionFailed` that says why.
@Suite(.timeLimit(.minutes(5)))
struct HCICentralTests {
    static let peer = FakePeer(name: "fake-smp")

    static func central(_ fake: FakeController, target: String = peer.name, attTimeout: Duration = .seconds(60))
        -> HCICentral
    {
        var options = HCICentral.Options(
            controller: fake.address,
            target: target,
            scanTimeout: .seconds(60),
            connectTimeout: .seconds(60)
        )
        options.attTransactionTimeout = attTimeout
        return HCICentral(options)
    }

    /// The first event of the link.
    static func firstEvent(_ link: HCIGATTLink) async -> GATTLinkEvent? {
        for await event in link.events { return event }
        return nil
    }

    @Test(arguments: [FakeDelivery.whole, .byteByByte, .randomSplits(seed: 7)])
    func findsConnectsAndSubscribes(_ delivery: FakeDelivery) async throws {
        let fake = try FakeController(delivery: delivery, peer: Self.peer)
        defer { fake.stop() }
        let central = Self.central(fake)
        let link = try await central.connect()
        // SMPHCI's server offers 498, as our client does.
        #expect(link.maximumWriteLength == 495)
        #expect(link.connection.peer == Self.peer.address)
        #expect(try await link.writeWithoutResponse([0x01, 0x02, 0x03]))
        let write = try await fake.pdu { $0.channelID == .att && $0.payload.first == 0x52 }
        #expect(write?.payload == [0x52, 0x07, 0x00, 0x01, 0x02, 0x03])
        fake.send(L2CAPPDU(channelID: .att, payload: [0x1B, 0x07, 0x00, 0x0A, 0x0B]))
        guard case .notification(let value) = await Self.firstEvent(link) else {
            Issue.record("no notification")
            return
        }
        #expect(value == [0x0A, 0x0B])
        await central.close()
    }

    /// One way for the peer to break the GATT setup, and what the central must say.
    struct Breakage: Sendable, CustomStringConvertible {
        var description: String
        var request: ATTOpcode
        var answer: FakePeerAnswer
        var code: HCIError.Code
        var fragment: String
    }

    static let breakages: [Breakage] = [
        Breakage(
            description: "an ATT error to the service discovery",
            request: .findByTypeValueRequest,
            answer: .error(.attributeNotFound),
            code: .missingAttribute,
            fragment: "no SMP service"
        ),
        Breakage(
            description: "an MTU response too short",
            request: .exchangeMTURequest,
            answer: .raw([0x03, 0x17]),
            code: .malformedPacket,
            fragment: "MTU"
        ),
        Breakage(
            description: "a response to another request",
            request: .findByTypeValueRequest,
            answer: .raw([0x05, 0x01, 0x08, 0x00, 0x02, 0x29]),
            code: .protocolViolation,
            fragment: "while expecting"
        ),
        Breakage(
            description: "a refused subscription",
            request: .writeRequest,
            answer: .error(.writeNotPermitted),
            code: .attributeRequestFailed,
            fragment: "subscription"
        ),
        Breakage(
            description: "a request never answered",
            request: .readByTypeRequest,
            answer: .silence,
            code: .timeout,
            fragment: "did not answer"
        ),
    ]

    /// The setup fails with the machine's error as the cause, and the central hangs up.
    @Test(arguments: breakages)
    func aBrokenSetupIsAClearConnectionFailure(_ breakage: Breakage) async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        fake.peerAnswers(breakage.request, with: breakage.answer)
        // Short only where the peer is silent: every other answer comes at once.
        let central = Self.central(fake, attTimeout: .seconds(1))
        let error = await #expect(throws: SMPTransportError.self) { _ = try await central.connect() }
        #expect(error?.code == .connectionFailed)
        #expect(
            error?.message.contains("cannot use SMP over GATT on 'fake-smp'") == true,
            "\(String(describing: error))"
        )
        let cause = error?.cause as? HCIError
        #expect(cause?.code == breakage.code, "\(String(describing: error))")
        #expect(cause?.message.contains(breakage.fragment) == true, "\(String(describing: cause))")
        #expect(try await fake.command(.disconnect) != nil, "the central did not hang up")
        await central.close()
    }

    @Test func aDisconnectionMidSetupFailsTheConnectWithItsReason() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        fake.peerAnswers(.findByTypeValueRequest, with: .disconnect(.connectionTimeout))
        let central = Self.central(fake)
        let error = await #expect(throws: SMPTransportError.self) { _ = try await central.connect() }
        #expect(error?.code == .connectionFailed)
        let cause = error?.cause as? HCIDisconnection
        #expect(cause?.reason == .connectionTimeout, "\(String(describing: error))")
        await central.close()
    }

    @Test func aDeviceThatIsNotThereIsNamedWithWhatWasSeen() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        var options = HCICentral.Options(controller: fake.address, target: "absent", scanTimeout: .seconds(1))
        options.connectTimeout = .seconds(60)
        let central = HCICentral(options)
        let error = await #expect(throws: SMPTransportError.self) { _ = try await central.connect() }
        #expect(error?.message.contains("no connectable device named or addressed 'absent'") == true)
        #expect(error?.message.contains("seen: fake-smp") == true, "\(String(describing: error))")
        await central.close()
    }

    /// After the setup, a malformed PDU from the peer is dropped: the next notification arrives.
    @Test func aMalformedPDUAfterTheSetupIsDropped() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let central = Self.central(fake)
        let link = try await central.connect()
        fake.send(L2CAPPDU(channelID: .att, payload: [0x1B, 0x07]))
        fake.send(L2CAPPDU(channelID: .att, payload: [0x13]))
        fake.send(L2CAPPDU(channelID: .att, payload: [0x1B, 0x07, 0x00, 0x42]))
        guard case .notification(let value) = await Self.firstEvent(link) else {
            Issue.record("the link did not go on")
            return
        }
        #expect(value == [0x42])
        await central.close()
    }

    /// Hanging up: the controller is asked to disconnect, and the link ends with its answer.
    @Test func disconnectingEndsTheLink() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let central = Self.central(fake)
        let link = try await central.connect()
        await link.disconnect()
        let command = try await fake.command(.disconnect)
        #expect(command?.parameters == [0x40, 0x00, 0x13], "handle 0x0040, remote user terminated")
        guard case .disconnected(let error) = await Self.firstEvent(link) else {
            Issue.record("no disconnection")
            return
        }
        let cause = (error as? SMPTransportError)?.cause as? HCIDisconnection
        #expect(cause?.reason == .connectionTerminatedByLocalHost, "\(String(describing: error))")
        await central.close()
    }

    @Test func theControllerGoingAwayEndsTheLinkWithDisconnected() async throws {
        let fake = try FakeController(peer: Self.peer)
        defer { fake.stop() }
        let central = Self.central(fake)
        let link = try await central.connect()
        fake.closeConnection()
        guard case .disconnected(let error) = await Self.firstEvent(link) else {
            Issue.record("no disconnection")
            return
        }
        #expect((error as? SMPTransportError)?.code == .disconnected, "\(String(describing: error))")
        await #expect(throws: SMPTransportError.self) { _ = try await link.writeWithoutResponse([1]) }
        // The next connect opens the controller afresh, and says it is gone.
        await #expect(throws: SMPTransportError.self) { _ = try await central.connect() }
        await central.close()
    }
}
