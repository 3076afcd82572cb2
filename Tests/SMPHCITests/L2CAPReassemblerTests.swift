import SMPHCI
import Testing

struct L2CAPReassemblerTests {
    static func write() throws -> L2CAPPDU {
        try L2CAPPDU(bytes: try bytes(BumbleVectors.l2capATTWrite))
    }

    @Test func joinsBumblesFragments() throws {
        var reassembler = L2CAPReassembler()
        var pdus: [L2CAPPDU] = []
        for hex in [
            BumbleVectors.aclATTWriteFragment0, BumbleVectors.aclATTWriteFragment1, BumbleVectors.aclATTWriteFragment2,
        ] {
            guard case .acl(let packet) = try h4Packet(hex) else { throw HCIError(.malformedPacket) }
            if let pdu = try reassembler.receive(packet) { pdus.append(pdu) }
        }
        #expect(pdus == [try Self.write()])
        #expect(!reassembler.isReassembling)
    }

    @Test(arguments: [1, 2, 3, 4, 5, 27, 63, 64, 100])
    func anyFragmentSizeGivesThePDUBack(size: Int) throws {
        let pdu = try Self.write()
        var reassembler = L2CAPReassembler()
        var out: [L2CAPPDU] = []
        for _ in 0..<3 {
            for fragment in pdu.fragments(connectionHandle: 1, maximumDataLength: size) {
                if let whole = try reassembler.receive(fragment) { out.append(whole) }
            }
        }
        #expect(out == [pdu, pdu, pdu])
    }

    @Test func aWholePDULongerThanTheBufferSizeIsAccepted() throws {
        // Bumble's controller sends a whole PDU in one ACL packet, whatever its buffer size.
        let pdu = L2CAPPDU(channelID: .att, payload: [UInt8](repeating: 0x5A, count: 498))
        var reassembler = L2CAPReassembler()
        let packet = HCIACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: pdu.encoded())
        #expect(try reassembler.receive(packet) == pdu)
    }

    @Test func aContinuationWithoutAStartIsMalformed() {
        var reassembler = L2CAPReassembler()
        let packet = HCIACLDataPacket(connectionHandle: 1, packetBoundary: .continuing, data: [1, 2])
        #expect(throws: HCIError(.malformedPacket)) { try reassembler.receive(packet) }
    }

    @Test func dataPastThePDUIsMalformed() {
        var reassembler = L2CAPReassembler()
        let packet = HCIACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [1, 0, 4, 0, 9, 9])
        #expect(throws: HCIError(.malformedPacket)) { try reassembler.receive(packet) }
    }

    @Test func aNewStartDropsTheUnfinishedPDU() throws {
        var reassembler = L2CAPReassembler()
        let unfinished = HCIACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [9, 0, 4, 0, 1])
        #expect(try reassembler.receive(unfinished) == nil)
        let whole = L2CAPPDU(channelID: .att, payload: [0x02, 0xF7, 0x00])
        let packet = HCIACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: whole.encoded())
        #expect(try reassembler.receive(packet) == whole)
    }

    @Test func aPDUOverTheLimitIsRefusedAtItsHeader() {
        var reassembler = L2CAPReassembler(maximumPayloadLength: 502)
        let packet = HCIACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [0xF7, 0x01, 4, 0])
        #expect(throws: HCIError(.limitExceeded)) { try reassembler.receive(packet) }
    }
}
