import Foundation
import Testing

@testable import MCUmgrCommands

/// The URLs `mcumgr ui` keeps for its next run.
@Suite struct RecentDevicesTests {
    @Test func recentDevicesSurviveARestart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-ui-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = RecentDevices(directory: folder.appendingPathComponent("config"))
        #expect(store.load().isEmpty)
        store.save(["sim://", "udp://192.0.2.1:1337"])
        #expect(
            RecentDevices(directory: folder.appendingPathComponent("config")).load() == [
                "sim://", "udp://192.0.2.1:1337",
            ]
        )
        try Data("not json".utf8).write(to: store.file)
        #expect(store.load().isEmpty)
    }
}
