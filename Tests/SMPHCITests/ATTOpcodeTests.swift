import SMPHCI
import Testing

struct ATTOpcodeTests {
    @Test(arguments: [
        (UInt8(0x02), true, false), (0x0A, true, false), (0x12, true, false), (0x16, true, false), (0x20, true, false),
        (0x3F, true, false), (0x01, false, false), (0x0B, false, false), (0x1B, false, false), (0x1D, false, false),
        (0x1E, false, false), (0x52, false, true), (0xD2, false, true), (0x7F, false, true),
    ])
    func requestsAreAnsweredCommandsNever(raw: UInt8, isRequest: Bool, isCommand: Bool) {
        let opcode = ATTOpcode(rawValue: raw)
        #expect(opcode.isRequest == isRequest)
        #expect(opcode.isCommand == isCommand)
    }

    @Test func theDescriptionNamesTheOpcodeAndItsNumber() {
        #expect(ATTOpcode.readByTypeRequest.description == "Read By Type Request (0x08)")
        #expect(ATTOpcode(rawValue: 0x16).description == "0x16")
        #expect(ATTOpcode.writeCommand.name == "Write Command")
    }
}
