import Foundation
import MCUmgrConnect
import MCUmgrFleet
import Testing

@Suite struct SQLiteRolloutStoreTests {
    static let rollout = RolloutDescription(id: "abc123", file: "app.bin", mode: "confirm-only", versions: ["1.1.0"])

    static func devices(_ count: Int) throws -> [Inventory.Device] {
        try (0..<count).map {
            Inventory.Device(
                url: try ConnectionURL(parsing: "udp://10.0.0.\($0 + 1):1337"),
                name: "d\($0)",
                labels: ["n": "\($0)"]
            )
        }
    }

    @Test func recordsSurviveTheStoreAndResumeAsTheyWere() async throws {
        let path = FleetHarness.scratch("state.sqlite")
        let store = try await SQLiteRolloutStore(path: path)
        var records = try await store.prepare(Self.rollout, devices: try Self.devices(5), retryFailed: false)
        #expect(records.map(\.status) == Array(repeating: .pending, count: 5))
        records[0].status = .upgraded
        records[0].versionBefore = "1.0.0"
        records[0].versionAfter = "1.1.0"
        records[0].attempts = 1
        records[0].phase = .canary
        records[0].startedAt = Date(timeIntervalSince1970: 100)
        records[1].status = .failed
        records[1].failure = AttemptFailure(code: "device rejected", state: "uploading", message: "no")
        records[2].status = .running
        records[2].notBefore = Date(timeIntervalSince1970: 200)
        records[3].status = .skipped
        records[4].status = .unreachable
        try await store.save(records, rollout: Self.rollout.id)
        await store.close()

        let reopened = try await SQLiteRolloutStore(path: path)
        let (description, stored) = try #require(try await reopened.rollout(nil))
        #expect(description == Self.rollout)
        #expect(stored == records)
        let resumed = try await reopened.prepare(Self.rollout, devices: try Self.devices(5), retryFailed: false)
        #expect(resumed.map(\.status) == [.upgraded, .failed, .running, .pending, .unreachable])
        let retried = try await reopened.prepare(Self.rollout, devices: try Self.devices(5), retryFailed: true)
        #expect(retried.map(\.status) == [.upgraded, .pending, .running, .pending, .pending])
        #expect(retried[1].failure == nil)
        await reopened.close()
    }

    @Test func aSecondWriterIsRefusedWhileTheFirstRuns() async throws {
        let path = FleetHarness.scratch("state.sqlite")
        let first = try await SQLiteRolloutStore(path: path)
        await #expect(throws: RolloutStoreError.self) { _ = try await SQLiteRolloutStore(path: path) }
        let reader = try await SQLiteRolloutStore(path: path, exclusive: false)
        await reader.close()
        await first.close()
        let again = try await SQLiteRolloutStore(path: path)
        await again.close()
    }

    @Test func aFileThatIsNotAStateFileIsRefused() async throws {
        let path = FleetHarness.scratch("junk.sqlite")
        try Data("this is not a database".utf8).write(to: URL(fileURLWithPath: path))
        await #expect(throws: RolloutStoreError.self) { _ = try await SQLiteRolloutStore(path: path) }
    }

    @Test func devicesLeavingTheInventoryAreNotPartOfTheRun() async throws {
        let path = FleetHarness.scratch("state.sqlite")
        let store = try await SQLiteRolloutStore(path: path)
        _ = try await store.prepare(Self.rollout, devices: try Self.devices(3), retryFailed: false)
        let fewer = try await store.prepare(
            Self.rollout,
            devices: Array(try Self.devices(3).reversed().prefix(2)),
            retryFailed: false
        )
        #expect(fewer.map(\.id) == ["d2", "d1"])
        #expect(fewer.map(\.position) == [0, 1])
        await store.close()
    }
}
