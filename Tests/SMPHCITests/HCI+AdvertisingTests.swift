import SMPHCI
import Testing

struct HCIAdvertisingTests {
    static let smpService = BluetoothUUID("8D53DC1D-1DB7-4CD3-868B-8A527460AA84")!
    static let advertisingData = AdvertisingData(structures: [
        ADStructure(type: .flags, data: [0x06]),
        ADStructure(type: .completeServiceUUIDs128, data: smpService.littleEndianBytes),
    ]).encoded()
    static let scanResponseData = AdvertisingData(structures: [
        ADStructure(type: .completeLocalName, data: Array("swift-mcumgr".utf8))
    ]).encoded()

    static func commands() throws -> [GoldenCommand] {
        [
            GoldenCommand(
                GAPVectors.leSetAdvertisingParameters,
                HCI.LESetAdvertisingParameters(
                    intervalMin: 160,
                    intervalMax: 160,
                    type: .connectableUndirected,
                    ownAddressType: .randomDevice
                )
            ),
            GoldenCommand(
                GAPVectors.leSetAdvertisingParametersDirected,
                HCI.LESetAdvertisingParameters(
                    intervalMin: 0x20,
                    intervalMax: 0x30,
                    type: .connectableDirectedLowDuty,
                    ownAddressType: .publicDevice,
                    peerAddressType: .randomDevice,
                    peerAddress: BluetoothAddress("C4:F2:17:1A:1D:BB")!,
                    channelMap: 0x05,
                    filterPolicy: 3
                )
            ),
            GoldenCommand(GAPVectors.leSetAdvertisingData, try HCI.LESetAdvertisingData(data: advertisingData)),
            GoldenCommand(GAPVectors.leSetAdvertisingDataEmpty, try HCI.LESetAdvertisingData(data: [])),
            GoldenCommand(GAPVectors.leSetScanResponseData, try HCI.LESetScanResponseData(data: scanResponseData)),
            GoldenCommand(GAPVectors.leSetAdvertisingEnable, HCI.LESetAdvertisingEnable(enable: true)),
            GoldenCommand(GAPVectors.leSetAdvertisingDisable, HCI.LESetAdvertisingEnable(enable: false)),
            GoldenCommand(GAPVectors.leSetDataLength, HCI.LESetDataLength(connectionHandle: 0x0040)),
        ]
    }

    @Test(arguments: try commands())
    func encodesToBumblesBytesAndParsesThemBack(command: GoldenCommand) throws {
        #expect(H4Encoder.encode(.command(command.packet)) == (try bytes(command.hex)))
        guard case .command(let packet) = try h4Packet(command.hex) else {
            Issue.record("not a command")
            return
        }
        #expect(try command.parsesBack(packet))
    }

    @Test func dataLongerThan31BytesIsRefused() {
        let long = [UInt8](repeating: 0x41, count: 32)
        #expect(throws: HCIError(.limitExceeded)) { try HCI.LESetAdvertisingData(data: long) }
        #expect(throws: HCIError(.limitExceeded)) { try HCI.LESetScanResponseData(data: long) }
        #expect(throws: Never.self) { try HCI.LESetAdvertisingData(data: Array(long.prefix(31))) }
    }

    @Test(arguments: [
        // A length beyond 31, a field shorter than 31 bytes, a byte after the field.
        [UInt8]([32] + [UInt8](repeating: 0, count: 31)),
        [UInt8]([3, 2, 1, 6]),
        [UInt8]([0] + [UInt8](repeating: 0, count: 32)),
    ])
    func aMisshapenDataFieldIsMalformed(parameters: [UInt8]) {
        let packet = HCICommandPacket(opcode: .leSetAdvertisingData, parameters: parameters)
        #expect(throws: HCIError(.malformedPacket)) { try packet.command(as: HCI.LESetAdvertisingData.self) }
        let response = HCICommandPacket(opcode: .leSetScanResponseData, parameters: parameters)
        #expect(throws: HCIError(.malformedPacket)) { try response.command(as: HCI.LESetScanResponseData.self) }
    }

    @Test func theEnableIsZeroOrOne() {
        let packet = HCICommandPacket(opcode: .leSetAdvertisingEnable, parameters: [0x02])
        #expect(throws: HCIError(.malformedPacket)) { try packet.command(as: HCI.LESetAdvertisingEnable.self) }
    }
}
