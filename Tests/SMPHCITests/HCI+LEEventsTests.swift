import SMPHCI
import Testing

struct HCILEEventsTests {
    static let events: [(String, HCIEvent)] = [
        (
            BumbleVectors.leConnectionComplete,
            .leConnectionComplete(
                .init(
                    status: .success,
                    connectionHandle: 0x0040,
                    role: .central,
                    peerAddressType: .randomDevice,
                    peerAddress: BluetoothAddress("C4:F2:17:1A:1D:BB")!,
                    connectionInterval: 40,
                    peripheralLatency: 0,
                    supervisionTimeout: 400,
                    centralClockAccuracy: 0
                )
            )
        ),
        (
            BumbleVectors.leConnectionCompleteFailed,
            .leConnectionComplete(
                .init(
                    status: .connectionFailedToBeEstablished,
                    connectionHandle: 0,
                    role: .central,
                    peerAddressType: .publicDevice,
                    peerAddress: .zero,
                    connectionInterval: 0,
                    peripheralLatency: 0,
                    supervisionTimeout: 0,
                    centralClockAccuracy: 0
                )
            )
        ),
        (
            BumbleVectors.leEnhancedConnectionComplete,
            .leEnhancedConnectionComplete(
                .init(
                    status: .success,
                    connectionHandle: 0x0041,
                    role: .central,
                    peerAddressType: .publicDevice,
                    peerAddress: BluetoothAddress("00:1B:DC:07:32:E1")!,
                    localResolvablePrivateAddress: BluetoothAddress("4A:01:02:03:04:05")!,
                    peerResolvablePrivateAddress: .zero,
                    connectionInterval: 24,
                    peripheralLatency: 1,
                    supervisionTimeout: 500,
                    centralClockAccuracy: 5
                )
            )
        ),
        (
            BumbleVectors.leConnectionUpdateComplete,
            .leConnectionUpdateComplete(
                .init(
                    status: .success,
                    connectionHandle: 0x0040,
                    connectionInterval: 6,
                    peripheralLatency: 0,
                    supervisionTimeout: 100
                )
            )
        ),
    ]

    @Test(arguments: events)
    func parsesBumblesEventsAndWritesThemBack(hex: String, event: HCIEvent) throws {
        #expect(try h4Event(hex) == event)
        #expect(H4Encoder.encode(.event(event.packet)) == (try bytes(hex)))
    }

    @Test func anLEMetaEventWithoutASubeventIsMalformed() {
        #expect(throws: HCIError(.malformedPacket)) { try HCIEvent(HCIEventPacket(code: .leMeta, parameters: [])) }
    }

    @Test func anUnknownSubeventIsKeptAsItsPacket() throws {
        // LE PHY Update Complete: not parsed by this host.
        let packet = HCIEventPacket(code: .leMeta, parameters: [0x0C, 0x00, 0x40, 0x00, 0x02, 0x02])
        #expect(try HCIEvent(packet) == .other(packet))
    }

    @Test func aTruncatedConnectionCompleteIsMalformed() throws {
        var parameters = try bytes(BumbleVectors.leConnectionComplete).dropFirst(3)
        parameters.removeLast()
        #expect(throws: HCIError(.malformedPacket)) {
            try HCIEvent(HCIEventPacket(code: .leMeta, parameters: Array(parameters)))
        }
    }
}
