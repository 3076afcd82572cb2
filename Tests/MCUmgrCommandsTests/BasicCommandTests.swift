import Foundation
import MCUmgrCommands
import Testing

/// `mcumgr basic erase-storage` against the simulated device.
@Suite struct BasicCommandTests {
    @Test func eraseStorageForgetsSavedSettings() async throws {
        // The device reboots as soon as it has answered the reset and is back at once: the next
        // command then meets the rebooted device (a person waits for the reboot instead).
        let device = SimDevice(options: "reset_ms=0&boot_ms=0")
        try device.saveSettings(["app/x": Data("1".utf8)])
        #expect(await CLI.sim("settings", "read", "app/x", device: device).stdout == "1\n")
        let erase = await CLI.sim("basic", "erase-storage", device: device)
        #expect(erase.status == 0, "\(erase.stderr)")
        #expect(erase.stdout == "erased the storage partition\n")
        // Like Zephyr, the running settings survive the erase; the next boot finds none saved.
        #expect(await CLI.sim("os", "reset", device: device).status == 0)
        let read = await CLI.sim("settings", "read", "app/x", device: device)
        #expect(read.stderr == "error: the device refused: settings error 3 KEY_NOT_FOUND\n")
        let json = await CLI.sim("basic", "erase-storage", "--json", device: device)
        #expect(json.stdout == "{}\n")
    }
}
