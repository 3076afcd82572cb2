import Foundation
import MCUmgrCommands
import Testing

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

    @Test func anUnknownGroupIsRefusedByName() async {
        let result = await CLI.sim("stat", "nonesuch")
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr == "error: the device refused: stat error 2 INVALID_GROUP\n")
    }
}
