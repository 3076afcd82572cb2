import Foundation
import MCUmgrCommands
import Testing

/// `mcumgr settings …` against the simulated device. Every command boots the simulated device
/// again, which keeps only saved settings; the values read are seeded as saved ones.
@Suite struct SettingsCommandTests {
    static func seeded() throws -> SimDevice {
        let device = SimDevice()
        try device.saveSettings(["app/name": Data("blinky".utf8), "app/blob": Data([0x00, 0xff, 0x10])])
        return device
    }

    @Test func readShowsHexOrText() async throws {
        let device = try Self.seeded()
        let hex = await CLI.sim("settings", "read", "app/name", device: device)
        #expect(hex.status == 0, "\(hex.stderr)")
        #expect(hex.stdout == "626c696e6b79\n")
        let text = await CLI.sim("settings", "read", "app/name", "--text", device: device)
        #expect(text.stdout == "blinky\n")
        let json = await CLI.sim("settings", "read", "app/name", "--json", device: device)
        #expect(json.stdout == #"{"name":"app/name","val":"626c696e6b79"}"# + "\n")
        let bytes = await CLI.sim("settings", "read", "app/blob", "--max-size", "16", device: device)
        #expect(bytes.stdout == "00ff10\n")
    }

    @Test func textThatIsNotUTF8FallsBackToHex() async throws {
        let device = SimDevice()
        try device.saveSettings(["app/raw": Data([0xff, 0xfe])])
        let result = await CLI.sim("settings", "read", "app/raw", "--text", device: device)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "fffe\n")
        #expect(result.stderr == "warning: the value of app/raw is not UTF-8 text; showing hex\n")
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
