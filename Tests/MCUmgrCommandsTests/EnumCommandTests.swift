import Foundation
import MCUmgrCommands
import Testing

/// `mcumgr enum …` against the simulated device.
@Suite struct EnumCommandTests {
    @Test func countListSingleDetails() async throws {
        let count = await CLI.sim("enum", "count")
        #expect(count.status == 0, "\(count.stderr)")
        #expect(count.stdout == "9 groups\n")

        let list = await CLI.sim("enum", "list")
        #expect(CLI.lines(list.stdout).prefix(3) == ["group  name", "    0  os", "    1  image"])
        let ids = try CLI.json(await CLI.sim("enum", "list", "--json").stdout)["groups"] as? [Int]
        #expect(ids == [0, 1, 2, 3, 8, 9, 10, 63, 66])

        let single = await CLI.sim("enum", "single", "2")
        #expect(single.stdout == "group 2 (stat)\n")
        let last = await CLI.sim("enum", "single", "8", "--json")
        #expect(last.stdout == #"{"group":66,"end":true}"# + "\n")

        let details = await CLI.sim("enum", "details", "1", "66")
        #expect(details.status == 0, "\(details.stderr)")
        #expect(
            details.stdout
                == "group  name         handlers\n    1  img mgmt            7\n   66  suitfu mgmt         7\n"
        )
    }

    @Test func anIndexBeyondTheListIsRefusedByName() async {
        let result = await CLI.sim("enum", "single", "99")
        #expect(result.status == 1)
        #expect(result.stderr == "error: the device refused: enum error 4 INDEX_TOO_LARGE\n")
    }
}
