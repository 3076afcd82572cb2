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

    /// Each device's Files paths survive a restart, by URL; the device used last comes first and
    /// the oldest beyond the limit go; a damaged file is an empty memory, not an error.
    @Test func aDevicesPathsSurviveARestart() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-ui-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = RecentDevices(directory: folder)
        #expect(store.loadPaths("sim://").isEmpty)
        store.savePaths("sim://", ["/lfs1/a.txt", "/lfs1/b.txt"])
        store.savePaths("udp://192.0.2.1:1337", ["/lfs1/c.txt"])
        let restarted = RecentDevices(directory: folder)
        #expect(restarted.loadPaths("sim://") == ["/lfs1/a.txt", "/lfs1/b.txt"])
        #expect(restarted.loadPaths("udp://192.0.2.1:1337") == ["/lfs1/c.txt"])
        store.savePaths("sim://", ["/lfs1/d.txt"])
        #expect(restarted.loadPaths("sim://") == ["/lfs1/d.txt"])

        for index in 0..<RecentDevices.pathDevices { store.savePaths("udp://192.0.2.2:\(index)", ["/x"]) }
        #expect(store.loadPaths("udp://192.0.2.2:0") == ["/x"])
        #expect(store.loadPaths("sim://").isEmpty, "the device used longest ago is dropped")

        try Data("[1, 2]".utf8).write(to: store.pathsFile)
        #expect(store.loadPaths("udp://192.0.2.2:0").isEmpty)
    }
}
