import Foundation
import HTTPTypes
import HummingbirdTesting
import SMPSimulator
import Testing

@Suite struct APIStatsTests {
    @Test func listsTheGroupsAndReadsOne() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let groups = try await client.get("/api/devices/\(id)/stats", harness).object()
            #expect(groups["groups"] as? [String] == ["smp_svr_stats", "mcumgr"])
            let group = try await client.get("/api/devices/\(id)/stats/group?name=mcumgr", harness)
            #expect(group.status == .ok, "\(group.text)")
            let object = try group.object()
            #expect(object["name"] as? String == "mcumgr")
            let fields = try #require(object["fields"] as? [[String: Any]])
            // In the device's order, as `mcumgr stat mcumgr` prints them.
            #expect(fields.compactMap { $0["name"] as? String } == ["requests", "boots", "upload_offset"])
            #expect((fields.first?["value"] as? Int ?? 0) > 0)
        }
    }

    @Test func aMissingGroupIsSaidAsTheCommandLineSaysIt() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.get("/api/devices/\(id)/stats/group?name=nope", harness)
            #expect(response.status == .notFound)
            #expect(
                response.errorLine
                    == "no statistics group 'nope' on the device; list them with `mcumgr --conn sim:// stat list`"
            )
        }
    }

    @Test func aGroupNameIsRequired() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.get("/api/devices/\(id)/stats/group", harness)
            #expect(response.status == .badRequest)
            #expect(response.errorLine == "Statistics group: give a group's name from the list")
        }
    }
}
