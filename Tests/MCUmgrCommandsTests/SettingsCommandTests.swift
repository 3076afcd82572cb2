import Foundation
import Testing

@testable import MCUmgrCommands

/// `mcumgr settings …` against the simulated device. Every command boots the simulated device
/// again, which keeps only saved settings; the values read are seeded as saved ones.
@Suite struct SettingsCommandTests {
    static func seeded() throws -> SimDevice {
        let device = SimDevice()
        try device.saveSettings(["app/name": Data("blinky".utf8), "app/blob": Data([0x00, 0xff, 0x10])])
        return device
    }

    /// A value is shown as written: text when it is printable UTF-8, hex otherwise; `--hex`
    /// forces hex. JSON always has the hex, and the text when it is printable.
    @Test func readShowsTextWhenPrintableElseHex() async throws {
        let device = try Self.seeded()
        let text = await CLI.sim("settings", "read", "app/name", device: device)
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout == "blinky\n")
        let hex = await CLI.sim("settings", "read", "app/name", "--hex", device: device)
        #expect(hex.stdout == "626c696e6b79\n")
        let json = await CLI.sim("settings", "read", "app/name", "--json", device: device)
        #expect(json.stdout == #"{"name":"app/name","val":"626c696e6b79","text":"blinky"}"# + "\n")
        let jsonHex = await CLI.sim("settings", "read", "app/name", "--json", "--hex", device: device)
        #expect(jsonHex.stdout == #"{"name":"app/name","val":"626c696e6b79"}"# + "\n")
        let bytes = await CLI.sim("settings", "read", "app/blob", "--max-size", "16", device: device)
        #expect(bytes.stdout == "00ff10\n")
        let bytesJSON = await CLI.sim("settings", "read", "app/blob", "--json", device: device)
        #expect(bytesJSON.stdout == #"{"name":"app/blob","val":"00ff10"}"# + "\n")
    }

    /// Which values count as printable: UTF-8 without control characters other than tab and
    /// line breaks.
    @Test(
        arguments: [
            (Data("hello".utf8), "hello"),
            (Data("grüße, 日本".utf8), "grüße, 日本"),
            (Data("a\tb\r\nc".utf8), "a\tb\r\nc"),
            (Data([0x68, 0x69, 0x00]), nil),
            (Data([0x1b, 0x5b, 0x32, 0x4a]), nil),
            (Data([0xff, 0xfe]), nil),
            (Data([0x00, 0xff, 0x10]), nil),
        ] as [(Data, String?)]
    )
    func printableText(_ value: Data, _ expected: String?) {
        #expect(SettingsCommand.Read.printableText(value) == expected)
    }

    /// What `settings write k hello` wrote reads back as hello.
    @Test func writtenTextReadsBackAsText() async throws {
        let device = SimDevice()
        let write = await CLI.sim("settings", "write", "app/greeting", "hello", device: device)
        #expect(write.status == 0, "\(write.stderr)")
        let read = await CLI.sim("settings", "read", "app/greeting", device: device)
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "hello\n")
    }

    @Test func hexAndTextTogetherAreAUsageError() async {
        let result = await CLI.sim("settings", "read", "app/name", "--hex", "--text")
        #expect(result.status == 64)
        #expect(result.stderr == "error: give --hex or --text, not both\n")
    }

    @Test func writeTextOrHex() async throws {
        let text = await CLI.sim("settings", "write", "app/name", "blinky")
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout == "wrote app/name (6 bytes)\n")
        let hex = await CLI.sim("settings", "write", "app/blob", "00:ff:10", "--hex", "--json")
        #expect(hex.status == 0, "\(hex.stderr)")
        #expect(hex.stdout == #"{"name":"app/blob","val":"00ff10"}"# + "\n")
    }

    @Test func badHexIsAUsageError() async {
        let result = await CLI.sim("settings", "write", "a/b", "xyz", "--hex")
        #expect(result.status == 64)
        #expect(result.stderr == "error: value 'xyz' is not hex: use pairs of digits 0-9 a-f\n")
    }

    @Test func deleteThenReadIsRefusedByName() async throws {
        let device = try Self.seeded()
        let delete = await CLI.sim("settings", "delete", "app/name", device: device)
        #expect(delete.status == 0, "\(delete.stderr)")
        #expect(delete.stdout == "deleted app/name\n")
        let read = await CLI.sim("settings", "read", "app/name", device: device)
        #expect(read.status == 1)
        #expect(read.stdout == "")
        #expect(read.stderr == "error: the device refused: settings error 3 KEY_NOT_FOUND\n")
    }

    @Test func commitLoadSave() async {
        let commit = await CLI.sim("settings", "commit")
        #expect(commit.status == 0, "\(commit.stderr)")
        #expect(commit.stdout == "committed\n")
        let load = await CLI.sim("settings", "load")
        #expect(load.stdout == "loaded settings from storage\n")
        let save = await CLI.sim("settings", "save")
        #expect(save.stdout == "saved settings to storage\n")
        let subtree = await CLI.sim("settings", "save", "app", "--json")
        #expect(subtree.status == 0, "\(subtree.stderr)")
        #expect(subtree.stdout == #"{"name":"app"}"# + "\n")
    }
}
