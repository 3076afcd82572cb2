import SMPHCI
import Testing

/// A command, the bytes Bumble made for it, and whether those bytes parse back to it.
struct GoldenCommand: Sendable, CustomTestStringConvertible {
    let name: String
    let hex: String
    let packet: HCICommandPacket
    let parsesBack: @Sendable (HCICommandPacket) throws -> Bool

    init<Command: HCICommand>(_ hex: String, _ command: Command) {
        self.name = Command.name
        self.hex = hex
        self.packet = HCICommandPacket(command)
        self.parsesBack = { try $0.command(as: Command.self) == command }
    }

    var testDescription: String { name }
}

struct HCICommandPacketTests {
    @Test func aPacketIsOpcodeLengthAndParameters() throws {
        let packet = HCICommandPacket(opcode: .disconnect, parameters: [0x40, 0x00, 0x13])
        #expect(packet.encoded() == [0x06, 0x04, 0x03, 0x40, 0x00, 0x13])
        #expect(try HCICommandPacket(bytes: packet.encoded()) == packet)
    }

    @Test(arguments: [
        ([UInt8](), "Opcode needs 2 bytes"),
        ([0x03], "Opcode needs 2 bytes"),
        ([0x03, 0x0C], "Parameter_Total_Length needs 1 bytes"),
        ([0x03, 0x0C, 0x01], "length 1, but 0 parameter bytes"),
        ([0x03, 0x0C, 0x00, 0x00], "length 0, but 1 parameter bytes"),
    ])
    func aShortOrLongPacketIsMalformed(bytes: [UInt8], message: String) {
        #expect {
            try HCICommandPacket(bytes: bytes)
        } throws: { error in
            guard let error = error as? HCIError else { return false }
            return error.code == .malformedPacket && error.message.contains(message)
        }
    }

    @Test func parsingAsAnotherCommandIsAnError() {
        let packet = HCICommandPacket(HCI.Reset())
        #expect(throws: HCIError(.malformedPacket)) { try packet.command(as: HCI.ReadBDADDR.self) }
    }

    @Test func aParameterlessCommandRejectsParameters() {
        let packet = HCICommandPacket(opcode: .reset, parameters: [0])
        #expect(throws: HCIError(.malformedPacket)) { try packet.command(as: HCI.Reset.self) }
    }
}
