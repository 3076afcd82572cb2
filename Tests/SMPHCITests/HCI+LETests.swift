import SMPHCI
import Testing

struct HCILETests {
    static let peer = BluetoothAddress("C4:F2:17:1A:1D:BB")!

    static let commands: [GoldenCommand] = [
        GoldenCommand(
            BumbleVectors.leSetScanParameters,
            HCI.LESetScanParameters(scanType: .active, interval: 0x0060, window: 0x0030, ownAddressType: .randomDevice)
        ),
        GoldenCommand(BumbleVectors.leSetScanEnable, HCI.LESetScanEnable(enable: true, filterDuplicates: true)),
        GoldenCommand(
            BumbleVectors.leSetExtendedScanParameters1M,
            HCI.LESetExtendedScanParameters(
                ownAddressType: .randomDevice,
                scans: [.init(phy: .le1M, scanType: .active, interval: 0x0060, window: 0x0030)]
            )
        ),
        GoldenCommand(
            BumbleVectors.leSetExtendedScanParameters1MCoded,
            HCI.LESetExtendedScanParameters(
                ownAddressType: .publicDevice,
                scans: [
                    .init(phy: .leCoded, scanType: .passive, interval: 0x0120, window: 0x0090),
                    .init(phy: .le1M, scanType: .active, interval: 0x0060, window: 0x0030),
                ]
            )
        ),
        GoldenCommand(
            BumbleVectors.leSetExtendedScanEnable,
            HCI.LESetExtendedScanEnable(enable: true, filterDuplicates: 1)
        ),
        GoldenCommand(
            BumbleVectors.leCreateConnection,
            HCI.LECreateConnection(
                scanInterval: 0x0060,
                scanWindow: 0x0060,
                peerAddressType: .randomDevice,
                peerAddress: peer,
                ownAddressType: .randomDevice,
                connectionIntervalMin: 24,
                connectionIntervalMax: 40,
                maxLatency: 0,
                supervisionTimeout: 400
            )
        ),
        GoldenCommand(BumbleVectors.leCreateConnectionCancel, HCI.LECreateConnectionCancel()),
        GoldenCommand(BumbleVectors.disconnect, HCI.Disconnect(connectionHandle: 0x0040)),
    ]

    @Test(arguments: commands)
    func encodesToBumblesBytesAndParsesThemBack(command: GoldenCommand) throws {
        #expect(H4Encoder.encode(.command(command.packet)) == (try bytes(command.hex)))
        guard case .command(let packet) = try h4Packet(command.hex) else {
            Issue.record("not a command")
            return
        }
        #expect(try command.parsesBack(packet))
    }

    @Test func connectingAndDisconnectingAreAnsweredByCommandStatus() {
        #expect(HCI.LECreateConnection.answer == .commandStatus)
        #expect(HCI.Disconnect.answer == .commandStatus)
        #expect(HCI.LESetScanEnable.answer == .commandComplete)
    }

    @Test func aPHYBitWithoutItsParametersIsMalformed() {
        // Scanning_PHYs names 1M and Coded, but only one PHY's parameters follow.
        let packet = HCICommandPacket(
            opcode: .leSetExtendedScanParameters,
            parameters: [0x00, 0x00, 0x05, 0x01, 0x60, 0x00, 0x30, 0x00]
        )
        #expect(throws: HCIError(.malformedPacket)) { try packet.command(as: HCI.LESetExtendedScanParameters.self) }
    }

    @Test func aBooleanOtherThanZeroOrOneIsMalformed() {
        let packet = HCICommandPacket(opcode: .leSetScanEnable, parameters: [0x02, 0x00])
        #expect(throws: HCIError(.malformedPacket)) { try packet.command(as: HCI.LESetScanEnable.self) }
    }

    @Test func trailingBytesAfterACommandsParametersAreMalformed() {
        let packet = HCICommandPacket(opcode: .disconnect, parameters: [0x40, 0x00, 0x13, 0x00])
        #expect(throws: HCIError(.malformedPacket)) { try packet.command(as: HCI.Disconnect.self) }
    }
}
