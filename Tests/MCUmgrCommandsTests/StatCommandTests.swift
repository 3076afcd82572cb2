import Foundation
import Testing

@testable import MCUmgrCommands

/// `mcumgr stat list | stat NAME` against the simulated device.
@Suite struct StatCommandTests {
    @Test func listNamesTheGroups() async throws {
        let result = await CLI.sim("stat", "list")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "smp_svr_stats\nmcumgr\n")
        #expect(await CLI.sim("stat").stdout == result.stdout)
        let json = await CLI.sim("stat", "list", "--json")
        #expect(json.stdout == #"{"stat_list":["smp_svr_stats","mcumgr"]}"# + "\n")
    }

    /// A group the device does not have: said as such, whichever group Zephyr names in its
    /// error (3.4 answers in the Zephyr basic group, code 3 — FLASH_CONFIG_QUERY_FAIL there).
    @Test(arguments: ["sim://", "sim://?zephyr=latest"])
    func aMissingGroupIsSaidAsSuch(_ conn: String) async throws {
        let result = await CLI.run(["--conn", conn, "stat", "nosuch"])
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "error: no statistics group 'nosuch' on the device; list them with `mcumgr --conn \(CommandHints.shellQuoted(conn)) stat list`\n"
        )
        let json = await CLI.run(["--conn", conn, "stat", "nosuch", "--json"])
        #expect((try CLI.json(json.stdout)["error"] as? [String: Any])?["kind"] as? String == "device_refused")
    }

    @Test func aGroupByNameShowsItsCounters() async throws {
        let result = await CLI.sim("stat", "mcumgr")
        #expect(result.status == 0, "\(result.stderr)")
        let lines = CLI.lines(result.stdout)
        #expect(lines.first == "stat group mcumgr")
        #expect(
            lines.dropFirst().map { $0.split(separator: " ").first.map(String.init) } == [
                "requests", "boots", "upload_offset",
            ]
        )
        #expect(lines.contains("  boots          1"))
        let json = try CLI.json(await CLI.sim("stat", "show", "mcumgr", "--json").stdout)
        #expect(json["name"] as? String == "mcumgr")
        #expect((json["fields"] as? [String: Any])?["boots"] as? Int == 1)
    }
}
