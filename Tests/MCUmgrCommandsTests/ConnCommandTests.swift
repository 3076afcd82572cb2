import Foundation
import Testing

@testable import MCUmgrCommands

/// `mcumgr conn …` and the profile store, in a folder of their own (never the user's).
@Suite struct ConnCommandTests {
    /// Runs commands with the profile store in a fresh temporary folder.
    static func withProfiles<T>(_ body: (URL) async throws -> T) async rethrows -> T {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mcumgr-profiles-\(UUID().uuidString)"
        )
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await ProfileStore.$directoryOverride.withValue(folder) { try await body(folder) }
    }

    @Test func addRefusesToOverwriteWithoutForce() async {
        await Self.withProfiles { _ in
            let add = await CLI.run(["conn", "add", "board", "sim://"])
            #expect(add.status == 0, "\(add.stderr)")
            #expect(add.stdout == "saved profile 'board': sim://\n")
            let again = await CLI.run(["conn", "add", "board", "udp://192.168.1.10"])
            #expect(again.status == 64)
            #expect(again.stderr == "error: profile 'board' exists (sim://); add --force to replace it\n")
            #expect((try? ProfileStore().url(of: "board")) == "sim://")
            // The same URL again changes nothing and is no error.
            let same = await CLI.run(["conn", "add", "board", "sim://"])
            #expect(same.status == 0, "\(same.stderr)")
            let forced = await CLI.run(["conn", "add", "board", "udp://192.168.1.10", "--force"])
            #expect(forced.status == 0, "\(forced.stderr)")
            #expect((try? ProfileStore().url(of: "board")) == "udp://192.168.1.10")
        }
    }

    @Test func aProfileIsUsedWithC() async {
        await Self.withProfiles { _ in
            _ = await CLI.run(["conn", "add", "sim", "sim://"])
            let echo = await CLI.run(["-c", "sim", "os", "echo", "hi"])
            #expect(echo.status == 0, "\(echo.stderr)")
            #expect(echo.stdout == "hi\n")
            let missing = await CLI.run(["-c", "nope", "os", "echo", "hi"])
            #expect(missing.status == 64)
            #expect(missing.stderr == "error: no connection profile 'nope'; list them with 'mcumgr conn list'\n")
        }
    }

    /// `conn list` lists as `conn show` without a name does, and says how to add the first.
    @Test func listShowsEveryProfile() async {
        await Self.withProfiles { _ in
            let none = await CLI.run(["conn", "list"])
            #expect(none.status == 0, "\(none.stderr)")
            #expect(none.stdout == "no profiles; add one with 'mcumgr conn add NAME URL'\n")
            _ = await CLI.run(["conn", "add", "board", "sim://"])
            _ = await CLI.run(["conn", "add", "bench-01", "udp://192.168.1.10"])
            let list = await CLI.run(["conn", "list"])
            #expect(list.stdout == "bench-01  udp://192.168.1.10\nboard     sim://\n")
            #expect(list.stdout == (await CLI.run(["conn", "show"])).stdout)
            let json = await CLI.run(["conn", "list", "--json"])
            #expect(json.stdout == #"{"bench-01":"udp://192.168.1.10","board":"sim://"}"# + "\n")
        }
    }

    @Test func aBrokenProfilesFileIsBadData() async throws {
        try await Self.withProfiles { folder in
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            try Data("[1, 2]".utf8).write(to: folder.appendingPathComponent("profiles.json"))
            let result = await CLI.run(["conn", "show"])
            #expect(result.status == 65)
            CLI.expectOneErrorLine(result)
        }
    }

    /// Where profiles live: `$MCUMGR_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcumgr`, else under
    /// `$HOME` (empty values are unset).
    @Test(arguments: [
        (["MCUMGR_CONFIG_DIR": "/c", "XDG_CONFIG_HOME": "/x", "HOME": "/h"], "/c"),
        (["XDG_CONFIG_HOME": "/x", "HOME": "/h"], "/x/mcumgr"),
        (["XDG_CONFIG_HOME": "", "HOME": "/h"], homeConfig("/h")),
        (["HOME": "/home/someone"], homeConfig("/home/someone")),
    ])
    func defaultDirectoryHonoursTheEnvironment(_ environment: [String: String], _ expected: String) {
        #expect(ProfileStore.defaultDirectory(environment: environment).path == expected)
    }

    static func homeConfig(_ home: String) -> String {
        #if os(macOS)
            home + "/Library/Application Support/mcumgr"
        #else
            home + "/.config/mcumgr"
        #endif
    }
}

private func homeConfig(_ home: String) -> String { ConnCommandTests.homeConfig(home) }
