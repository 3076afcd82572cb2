import SMPBytes
import SMPCore
import SMPTestSupport
import Testing

struct SMPHeaderTests {
    @Test(
        arguments: [
            ("0a00000900000000", SMPVersion.v2, SMPOperation.write),
            ("0200000900000000", .v1, .write),
            ("0800000100010300", .v2, .read),
            ("0b00000700010101", .v2, .writeResponse),
            ("0100000000000000", .v1, .readResponse),
        ] as [(String, SMPVersion, SMPOperation)]
    )
    func parsesVersionAndOperation(_ hex: String, _ version: SMPVersion, _ operation: SMPOperation) throws {
        let header = try SMPHeader(parsing: TestBytes.hex(hex))
        #expect(header.version == version)
        #expect(header.operation == operation)
        #expect(TestBytes.hex(header.bytes) == hex)
    }

    @Test func fieldsAreBigEndian() throws {
        let header = try SMPHeader(parsing: TestBytes.hex("0a 00 12 34 00 42 fe 07"))
        #expect(header.length == 0x1234)
        #expect(header.group == SMPGroup(rawValue: 0x42))
        #expect(header.sequence == 0xfe)
        #expect(header.command == 7)
    }

    @Test func allThreeOperationBitsAndReservedBitsSurvive() throws {
        let header = try SMPHeader(parsing: TestBytes.hex("ff 01 00 00 00 00 00 00"))
        #expect(header.operation.rawValue == 7)
        #expect(header.version.rawValue == 3)
        #expect(header.operation.response == nil)
        #expect(TestBytes.hex(header.bytes) == "ff01000000000000")
    }

    @Test func truncatedHeaderIsAnError() {
        #expect(throws: SMPError(.truncatedHeader)) { try SMPHeader(parsing: [0x0a, 0x00, 0x00]) }
    }
}
