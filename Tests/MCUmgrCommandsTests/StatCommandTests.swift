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

    /// Zephyr 3.4 (the default device, as observed) answers a missing group with rc 3 in group
    /// 63, the Zephyr basic group, whose table names rc 3 FLASH_CONFIG_QUERY_FAIL: a Zephyr bug,
    /// shown as the device says it.
    @Test func anUnknownGroupOnZephyr34IsRefusedInTheBasicGroup() async {
        let result = await CLI.sim("stat", "nonesuch")
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr == "error: the device refused: basic error 3 FLASH_CONFIG_QUERY_FAIL\n")
    }

    /// Newer Zephyr answers in the statistics group: no statistic by that name.
    @Test func anUnknownGroupOnNewerZephyrIsRefusedByName() async {
        let result = await CLI.run(["stat", "nonesuch", "--conn", "sim://?zephyr=latest"])
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr == "error: the device refused: stat error 3 INVALID_STAT_NAME\n")
    }
}
