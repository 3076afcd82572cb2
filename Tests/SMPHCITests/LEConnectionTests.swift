import SMPHCI
import Testing

struct LEConnectionTests {
    /// Both completion events give the same connection, whichever the controller sends.
    @Test(arguments: [false, true])
    func bothCompletionEventsGiveTheSameConnection(enhanced: Bool) throws {
        let peer = GAP.advertiser
        let event: HCIEvent =
            enhanced
            ? .leEnhancedConnectionComplete(
                .init(
                    status: .success,
                    connectionHandle: 0x0042,
                    role: .central,
                    peerAddressType: .randomDevice,
                    peerAddress: peer,
                    connectionInterval: 36,
                    peripheralLatency: 2,
                    supervisionTimeout: 300,
                    centralClockAccuracy: 1
                )
            )
            : .leConnectionComplete(
                .init(
                    status: .success,
                    connectionHandle: 0x0042,
                    role: .central,
                    peerAddressType: .randomDevice,
                    peerAddress: peer,
                    connectionInterval: 36,
                    peripheralLatency: 2,
                    supervisionTimeout: 300,
                    centralClockAccuracy: 1
                )
            )
        var connector = LEConnector(peer: peer, peerType: .randomDevice, controller: try GAP.controller())
        _ = connector.start()
        _ = connector.receive(GAP.status(.leCreateConnection))
        let expected = LEConnection(
            handle: 0x0042,
            role: .central,
            peerAddress: peer,
            peerAddressType: .randomDevice,
            interval: 36,
            latency: 2,
            supervisionTimeout: 300
        )
        #expect(connector.receive(event) == .connected(expected))
    }
}
