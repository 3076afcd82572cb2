import SMPHCI
import Testing

struct L2CAPPDUTests {
    @Test func parsesBumblesPDUAndWritesItBack() throws {
        let bytes = try bytes(BumbleVectors.l2capATTMTURequest)
        let pdu = try L2CAPPDU(bytes: bytes)
        #expect(pdu.channelID == .att)
        #expect(pdu.payload == (try SMPHCITests.bytes(BumbleVectors.attExchangeMTURequest)))
        #expect(pdu.encoded() == bytes)
    }

    @Test func fragmentsAsBumblesHostDoes() throws {
        let pdu = try L2CAPPDU(bytes: try bytes(BumbleVectors.l2capATTWrite))
        let fragments = pdu.fragments(connectionHandle: 0x0040, maximumDataLength: 27)
        let expected = [
            BumbleVectors.aclATTWriteFragment0, BumbleVectors.aclATTWriteFragment1, BumbleVectors.aclATTWriteFragment2,
        ]
        #expect(fragments.map { H4Encoder.encode(.acl($0)) } == (try expected.map { try bytes($0) }))
    }

    @Test(arguments: [[UInt8](), [0x01, 0x00, 0x04], [0x02, 0x00, 0x04, 0x00, 0xAA], [0x00, 0x00, 0x04, 0x00, 0xAA]])
    func aPDUWhoseLengthIsNotItsPayloadIsMalformed(bytes: [UInt8]) {
        #expect(throws: HCIError(.malformedPacket)) { try L2CAPPDU(bytes: bytes) }
    }
}
