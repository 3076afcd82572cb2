import SMPHCI
import Testing

struct HCISupportedCommandsTests {
    @Test func readsBitsByOctetAndBit() throws {
        var bytes = [UInt8](repeating: 0, count: 64)
        bytes[41] = 1 << 5
        let commands = try #require(HCISupportedCommands(bytes: bytes))
        #expect(commands.leReadBufferSizeV2)
        #expect(!commands.extendedScanning)
        #expect(!commands.contains(octet: 64, bit: 0))
        #expect(!commands.contains(octet: 0, bit: 8))
    }

    @Test func extendedScanningNeedsBothCommands() throws {
        var bytes = [UInt8](repeating: 0, count: 64)
        bytes[37] = 1 << 5
        #expect(try #require(HCISupportedCommands(bytes: bytes)).extendedScanning == false)
        bytes[37] |= 1 << 6
        #expect(try #require(HCISupportedCommands(bytes: bytes)).extendedScanning)
    }

    @Test func needs64Bytes() {
        #expect(HCISupportedCommands(bytes: [UInt8](repeating: 0xFF, count: 63)) == nil)
    }
}
