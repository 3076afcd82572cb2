import SMPCBOR
import SMPCore
import Testing

@testable import SMPSimulator

@Suite("StatisticsHandler")
struct StatisticsHandlerTests {
    @Test("lists groups and reads one; success answers carry rc 0 in 3.4 only; a missing name is EINVAL")
    func statistics() async throws {
        var client = try await TestClient()
        #expect(try await client.send(StatisticsManagement.ListGroups()).groups == ["smp_svr_stats", "mcumgr"])
        let data = try await client.send(StatisticsManagement.GroupData(name: "smp_svr_stats"))
        #expect(data.name == "smp_svr_stats")
        #expect(data.fields.names == ["ticks"])
        // Zephyr 3.4's statistics handlers write "rc": 0 into their success answers (observed).
        #expect(try await client.payload(StatisticsManagement.ListGroups())["rc"] == 0)
        #expect(try await client.payload(StatisticsManagement.GroupData(name: "mcumgr"))["rc"] == 0)
        #expect(try await client.payload(group: .statistics, command: 0, operation: .read, [:])["rc"] == 3)

        var latest = try await TestClient(configuration: .init(release: .latest))
        #expect(try await latest.payload(StatisticsManagement.ListGroups())["rc"] == nil)
        #expect(try await latest.payload(StatisticsManagement.GroupData(name: "mcumgr"))["rc"] == nil)
    }

    @Test("Zephyr 3.4: a missing group is INVALID_STAT_NAME in group 63 (its bug); v1 clients get EUNKNOWN")
    func missingGroupInZephyr34() async throws {
        var client = try await TestClient()
        let v2 = try await client.payload(StatisticsManagement.GroupData(name: "nope"))
        #expect(v2["err"]?["group"] == 63)
        #expect(v2["err"]?["rc"] == 3)
        // Group 63's translation table has no entry for rc 3, so the original protocol says EUNKNOWN.
        let v1 = await deviceError {
            _ = try await client.send(StatisticsManagement.GroupData(name: "nope"), version: .v1)
        }
        #expect(v1?.returnCode == .unknown)
    }

    @Test("newer Zephyr: a missing group is INVALID_STAT_NAME in the statistics group; v1 clients get ENOENT")
    func missingGroupInLatestZephyr() async throws {
        var client = try await TestClient(configuration: .init(release: .latest))
        let error = await deviceError { _ = try await client.send(StatisticsManagement.GroupData(name: "nope")) }
        #expect(error?.matches(StatisticsManagement.ReturnCode.invalidStatName) == true)
        let v1 = await deviceError {
            _ = try await client.send(StatisticsManagement.GroupData(name: "nope"), version: .v1)
        }
        #expect(v1?.returnCode == .noEntry)
    }

    static let answers: [AnswerCase] = [
        AnswerCase(
            "3.4 list: rc first",
            StatisticsManagement.ListGroups(),
            [
                "bf",  // {_
                "62726300",  //   "rc": 0
                "69737461745f6c697374",  //   "stat_list":
                "9f",  //   [_
                "6d736d705f7376725f7374617473",  //     "smp_svr_stats"
                "666d63756d6772",  //     "mcumgr"
                "ff",  //   ]
                "ff",  // }
            ]
        ),
        AnswerCase(
            "3.4 group: rc first",
            StatisticsManagement.GroupData(name: "smp_svr_stats"),
            [
                "bf",  // {_
                "62726300",  //   "rc": 0
                "646e616d656d736d705f7376725f7374617473",  //   "name": "smp_svr_stats"
                "666669656c6473",  //   "fields":
                "bf",  //   {_
                "657469636b7301",  //     "ticks": 1
                "ff",  //   }
                "ff",  // }
            ]
        ),
        AnswerCase(
            "list, newer Zephyr",
            on: .init(release: .latest),
            StatisticsManagement.ListGroups(),
            [
                "bf",  // {_
                "69737461745f6c697374",  //   "stat_list":
                "9f",  //   [_
                "6d736d705f7376725f7374617473",  //     "smp_svr_stats"
                "666d63756d6772",  //     "mcumgr"
                "ff",  //   ]
                "ff",  // }
            ]
        ),
        AnswerCase(
            "group, newer Zephyr",
            on: .init(release: .latest),
            StatisticsManagement.GroupData(name: "mcumgr"),
            [
                "bf",  // {_
                "646e616d65666d63756d6772",  //   "name": "mcumgr"
                "666669656c6473",  //   "fields":
                "bf",  //   {_
                "68726571756573747301",  //     "requests": 1
                "65626f6f747301",  //     "boots": 1
                "6d75706c6f61645f6f666673657400",  //     "upload_offset": 0
                "ff",  //   }
                "ff",  // }
            ]
        ),
    ]

    @Test("answers byte for byte as Zephyr's stat_mgmt.c writes them", arguments: answers)
    func answerBytes(_ answer: AnswerCase) async throws {
        try await answer.check()
    }
}
