import SMPCBOR
import SMPCore
import Testing

@testable import SMPSimulator

@Suite("StatisticsHandler")
struct StatisticsHandlerTests {
    @Test("lists groups and reads one; an unknown group is INVALID_GROUP; a missing name EINVAL")
    func statistics() async throws {
        var client = try await TestClient()
        #expect(try await client.send(StatisticsManagement.ListGroups()).groups == ["smp_svr_stats", "mcumgr"])
        let data = try await client.send(StatisticsManagement.GroupData(name: "smp_svr_stats"))
        #expect(data.name == "smp_svr_stats")
        #expect(data.fields.names == ["ticks"])
        let error = await deviceError { _ = try await client.send(StatisticsManagement.GroupData(name: "nope")) }
        #expect(error?.matches(StatisticsManagement.ReturnCode.invalidGroup) == true)
        let v1 = await deviceError {
            _ = try await client.send(StatisticsManagement.GroupData(name: "nope"), version: .v1)
        }
        #expect(v1?.returnCode == .noEntry)
        #expect(try await client.payload(group: .statistics, command: 0, operation: .read, [:])["rc"] == 3)
    }
}
