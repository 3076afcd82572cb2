import SMPHCI
import Testing

struct HCIACLDataPacketTests {
    @Test func parsesBumblesACLPacketAndWritesItBack() throws {
        let expected = HCIACLDataPacket(
            connectionHandle: 0x0040,
            packetBoundary: .firstNonFlushable,
            data: try bytes(BumbleVectors.l2capATTMTURequest)
        )
        #expect(try h4Packet(BumbleVectors.aclATTMTURequest) == .acl(expected))
        #expect(H4Encoder.encode(.acl(expected)) == (try bytes(BumbleVectors.aclATTMTURequest)))
    }

    @Test func bumblesFragmentsCarryTheBoundaryFlagsAndJoinToThePDU() throws {
        let fragments = [
            BumbleVectors.aclATTWriteFragment0, BumbleVectors.aclATTWriteFragment1, BumbleVectors.aclATTWriteFragment2,
        ]
        var joined: [UInt8] = []
        for (index, hex) in fragments.enumerated() {
            guard case .acl(let packet) = try h4Packet(hex) else {
                Issue.record("not ACL")
                return
            }
            #expect(packet.connectionHandle == 0x0040)
            #expect(packet.packetBoundary == (index == 0 ? .firstNonFlushable : .continuing))
            #expect(packet.broadcastFlag == 0)
            joined += packet.data
        }
        #expect(joined == (try bytes(BumbleVectors.l2capATTWrite)))
    }

    @Test(arguments: [
        (UInt16(0x2041), UInt16(0x041), HCIACLDataPacket.PacketBoundary.firstFlushable, UInt8(0)),
        (0x1FFF, 0xFFF, .continuing, 0),
        (0xF001, 0x001, .completeFlushable, 3),
    ])
    func splitsTheHandleFromTheFlags(
        field: UInt16,
        handle: UInt16,
        boundary: HCIACLDataPacket.PacketBoundary,
        broadcast: UInt8
    ) throws {
        let packet = try HCIACLDataPacket(bytes: [UInt8(field & 0xFF), UInt8(field >> 8), 0x00, 0x00])
        #expect(packet.connectionHandle == handle)
        #expect(packet.packetBoundary == boundary)
        #expect(packet.broadcastFlag == broadcast)
        #expect(packet.encoded() == [UInt8(field & 0xFF), UInt8(field >> 8), 0x00, 0x00])
    }

    @Test(arguments: [[UInt8](), [0x40, 0x00, 0x01], [0x40, 0x00, 0x02, 0x00, 0xAA], [0x40, 0x00, 0x00, 0x00, 0xAA]])
    func aShortOrLongPacketIsMalformed(bytes: [UInt8]) {
        #expect(throws: HCIError(.malformedPacket)) { try HCIACLDataPacket(bytes: bytes) }
    }
}
