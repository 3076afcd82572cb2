import SMPHCI
import Testing

struct HCIOpcodeTests {
    @Test(arguments: [
        (HCIOpcode.reset, UInt16(0x0C03), UInt8(0x03), UInt16(0x0003)),
        (.leCreateConnection, 0x200D, 0x08, 0x000D),
        (.leReadBufferSizeV2, 0x2060, 0x08, 0x0060),
        (.disconnect, 0x0406, 0x01, 0x0006),
        (.readBDADDR, 0x1009, 0x04, 0x0009),
    ])
    func groupAndCommandFieldsMakeTheOpcode(opcode: HCIOpcode, raw: UInt16, ogf: UInt8, ocf: UInt16) {
        #expect(opcode.rawValue == raw)
        #expect(opcode.ogf == ogf)
        #expect(opcode.ocf == ocf)
        #expect(HCIOpcode(rawValue: raw) == HCIOpcode(ogf: ogf, ocf: ocf))
    }

    @Test func describesBothFields() {
        #expect(HCIOpcode.leCreateConnection.description == "OGF 0x08 OCF 0x000D (0x200D)")
    }
}
