import SMPHCI
import Testing

struct LEConnectorTests {
    static func connector(to peer: BluetoothAddress = GAP.advertiser, random: BluetoothAddress? = nil) throws
        -> LEConnector
    {
        LEConnector(peer: peer, peerType: .randomDevice, controller: try GAP.controller(random: random))
    }

    /// A connector whose LE Create Connection the controller accepted.
    static func pending(to peer: BluetoothAddress = GAP.advertiser) throws -> LEConnector {
        var connector = try connector(to: peer)
        _ = connector.start()
        #expect(connector.receive(try GAP.event(GAPVectors.bumbleCreateConnection0)) == .wait)
        return connector
    }

    @Test func connectsToBumblesAdvertiserWithTheDefaults() throws {
        var connector = try Self.connector()
        guard case .send(let packet) = connector.start() else {
            Issue.record("nothing sent")
            return
        }
        let create = try packet.command(as: HCI.LECreateConnection.self)
        #expect(
            create
                == HCI.LECreateConnection(
                    scanInterval: 0x60,
                    scanWindow: 0x30,
                    peerAddressType: .randomDevice,
                    peerAddress: GAP.advertiser,
                    ownAddressType: .publicDevice,
                    connectionIntervalMin: 24,
                    connectionIntervalMax: 40,
                    maxLatency: 0,
                    supervisionTimeout: 400
                )
        )
        #expect(connector.receive(try GAP.event(GAPVectors.bumbleCreateConnection0)) == .wait)
        let connection = LEConnection(
            handle: 0x0001,
            role: .central,
            peerAddress: GAP.advertiser,
            peerAddressType: .randomDevice,
            interval: 24,
            latency: 0,
            supervisionTimeout: 400
        )
        #expect(connector.receive(try GAP.event(GAPVectors.bumbleCreateConnection1)) == .connected(connection))
        #expect(connector.timedOut() == .wait)
    }

    @Test func theOwnAddressIsRandomWhenTheControllerHasOne() throws {
        var connector = try Self.connector(random: GAP.address("C0:AA:BB:CC:DD:EE"))
        guard case .send(let packet) = connector.start() else {
            Issue.record("nothing sent")
            return
        }
        #expect(try packet.command(as: HCI.LECreateConnection.self).ownAddressType == .randomDevice)
    }

    @Test func anEnhancedConnectionCompleteConnectsToo() throws {
        // Bumble's vector: central, public peer 00:1B:DC:07:32:E1.
        var connector = LEConnector(
            peer: GAP.address("00:1B:DC:07:32:E1"),
            peerType: .publicDevice,
            controller: try GAP.controller()
        )
        _ = connector.start()
        _ = connector.receive(GAP.status(.leCreateConnection))
        guard
            case .connected(let connection) = connector.receive(
                try GAP.event(BumbleVectors.leEnhancedConnectionComplete)
            )
        else {
            Issue.record("not connected")
            return
        }
        #expect(connection.handle == 0x0041)
        #expect(connection.latency == 1)
        #expect(connection.supervisionTimeout == 500)
    }

    @Test func aRefusedCreateConnectionFails() throws {
        var connector = try Self.connector()
        _ = connector.start()
        guard case .failed(let error) = connector.receive(GAP.status(.leCreateConnection, .commandDisallowed)) else {
            Issue.record("not failed")
            return
        }
        #expect(error.code == .commandFailed)
        #expect(error.status == .commandDisallowed)
    }

    @Test func aFailedConnectionCompleteFails() throws {
        var connector = try Self.pending()
        guard case .failed(let error) = connector.receive(try GAP.event(BumbleVectors.leConnectionCompleteFailed))
        else {
            Issue.record("not failed")
            return
        }
        #expect(error.code == .commandFailed)
        #expect(error.status == HCIStatus(rawValue: 0x3E))
    }

    @Test func theTimeoutCancelsAndTheUnknownConnectionCompletionFails() throws {
        var connector = try Self.pending(to: GAP.absent)
        guard case .send(let cancel) = connector.timedOut() else {
            Issue.record("no cancel")
            return
        }
        #expect(cancel.opcode == .leCreateConnectionCancel)
        #expect(connector.receive(try GAP.event(GAPVectors.bumbleCreateConnectionCancel0)) == .wait)
        let cancelled = GAP.connectionComplete(.unknownConnectionIdentifier, handle: 0, role: .central, peer: .zero)
        guard case .failed(let error) = connector.receive(cancelled) else {
            Issue.record("not failed")
            return
        }
        #expect(error.code == .timeout)
        #expect(error.message.contains("C4:F2:17:1A:1D:BB"))
    }

    @Test func bumblesSilentCancelFailsOnTheSecondTimeout() throws {
        // Bumble acknowledges the cancel and never sends the 0x02 completion.
        var connector = try Self.pending(to: GAP.absent)
        _ = connector.timedOut()
        #expect(connector.receive(try GAP.event(GAPVectors.bumbleCreateConnectionCancel0)) == .wait)
        #expect(connector.timedOut() == .failed(HCIError(.timeout)))
    }

    @Test(arguments: [HCIStatus.success, .commandDisallowed])
    func aConnectionRacingTheCancelIsKept(cancelStatus: HCIStatus) throws {
        var connector = try Self.pending()
        _ = connector.timedOut()
        let success = GAP.connectionComplete(role: .central, peer: GAP.advertiser)
        // The completion may come before or after the cancel's answer.
        if cancelStatus == .success {
            #expect(connector.receive(GAP.complete(.leCreateConnectionCancel, cancelStatus)) == .wait)
            guard case .connected = connector.receive(success) else {
                Issue.record("the connection was lost")
                return
            }
        } else {
            guard case .connected = connector.receive(success) else {
                Issue.record("the connection was lost")
                return
            }
            #expect(connector.receive(GAP.complete(.leCreateConnectionCancel, cancelStatus)) == .wait)
        }
    }

    @Test func aFailureBeforeTheCommandStatusIsAnEarlierAttempts() throws {
        var connector = try Self.connector()
        _ = connector.start()
        let late = GAP.connectionComplete(.unknownConnectionIdentifier, handle: 0, role: .central, peer: .zero)
        #expect(connector.receive(late) == .wait)
        #expect(connector.receive(GAP.status(.leCreateConnection)) == .wait)
        guard case .connected = connector.receive(GAP.connectionComplete(role: .central, peer: GAP.advertiser)) else {
            Issue.record("not connected")
            return
        }
    }

    @Test func aTimeoutBeforeTheCommandStatusCancelsToo() throws {
        var connector = try Self.connector()
        _ = connector.start()
        guard case .send(let cancel) = connector.timedOut() else {
            Issue.record("no cancel")
            return
        }
        #expect(cancel.opcode == .leCreateConnectionCancel)
    }

    /// Events that are not this connector's.
    static let foreign: [HCIEvent] = [
        GAP.connectionComplete(role: .peripheral, peer: GAP.advertiser),
        GAP.connectionComplete(role: .central, peer: GAP.absent),
        GAP.connectionComplete(role: .central, peer: GAP.advertiser, peerType: .publicDevice),
        GAP.connectionComplete(.connectionFailedToBeEstablished, role: .peripheral, peer: .zero),
        GAP.complete(.leSetScanEnable, .commandDisallowed),
        GAP.status(.disconnect, .unknownConnectionIdentifier),
        GAP.complete(.leCreateConnectionCancel),
        GAP.report(.connectableUndirected, []),
    ]

    @Test(arguments: foreign)
    func eventsForOthersAreIgnored(event: HCIEvent) throws {
        var connector = try Self.pending()
        #expect(connector.receive(event) == .wait)
        guard case .connected = connector.receive(GAP.connectionComplete(role: .central, peer: GAP.advertiser)) else {
            Issue.record("no longer connecting")
            return
        }
    }

    @Test func aResolvedIdentityTypeMatchesItsPlainType() throws {
        var connector = try Self.pending()
        guard
            case .connected(let connection) = connector.receive(
                GAP.connectionComplete(role: .central, peer: GAP.advertiser, peerType: .randomIdentity)
            )
        else {
            Issue.record("not connected")
            return
        }
        #expect(connection.peerAddressType == .randomIdentity)
    }

    @Test func nothingHappensBeforeTheStart() throws {
        var connector = try Self.connector()
        #expect(connector.receive(GAP.connectionComplete(role: .central, peer: GAP.advertiser)) == .wait)
        #expect(connector.timedOut() == .wait)
    }
}
