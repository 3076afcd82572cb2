import Foundation
import MCUmgrConnect
import MCUmgrFleet
import SMPTestSupport
import Testing

/// The shared store against a real PostgreSQL server: two stores are two hosts.
@Suite(.enabled(if: TestPostgres.enabled, "no PostgreSQL: set MCUMGR_TEST_POSTGRES (scripts/postgres-test-server.sh)"))
struct PostgresRolloutStoreTests {
    static let rollout = RolloutDescription(id: "r1", file: "app.bin", mode: "confirm-only", versions: ["2.0.0"])
    static let upgraded = AttemptResult.upgraded(versionBefore: "1.0.0", versionAfter: "2.0.0", uploadedBytes: 10)

    static func devices(_ count: Int) throws -> [Inventory.Device] {
        try (0..<count).map {
            Inventory.Device(url: try ConnectionURL(parsing: "udp://10.0.0.\($0 + 1):1337"), name: "d\($0)")
        }
    }

    /// Two hosts on one rollout with a database each would not be one rollout: both connect to the
    /// same fresh database.
    static func twoHosts(_ count: Int) async throws -> (PostgresRolloutStore, PostgresRolloutStore) {
        let url = try TestPostgres.freshDatabase()
        let a = try await PostgresRolloutStore(url: url)
        let b = try await PostgresRolloutStore(url: url)
        _ = try await a.prepare(Self.rollout, devices: try Self.devices(count), retryFailed: false)
        _ = try await b.prepare(Self.rollout, devices: try Self.devices(count), retryFailed: false)
        return (a, b)
    }

    @Test func theCanaryIsClaimedOnceAcrossHostsAndTheWavesWaitForIt() async throws {
        let (a, b) = try await Self.twoHosts(4)
        let policy = RolloutPolicy(canary: 1, waves: [.percent(50), .percent(100)], parallel: 4)
        let first = try await a.claim(Self.rollout.id, worker: "a", policy: policy, capacity: 4, lease: .seconds(60))
        let second = try await b.claim(Self.rollout.id, worker: "b", policy: policy, capacity: 4, lease: .seconds(60))
        #expect(first.started.map(\.id) == ["d0"] && first.started.first?.phase == .canary)
        #expect(second.started.isEmpty, "the canary goes alone: \(second.started.map(\.id))")
        let ended = try await a.finish(
            Self.rollout.id,
            device: "d0",
            worker: "a",
            result: Self.upgraded,
            policy: policy
        )
        #expect(ended?.record.status == .upgraded)
        let wave = try await b.claim(Self.rollout.id, worker: "b", policy: policy, capacity: 4, lease: .seconds(60))
        #expect(wave.started.map(\.id) == ["d1"], "wave 1 is positions 0-1")
        let waiting = try await a.claim(Self.rollout.id, worker: "a", policy: policy, capacity: 4, lease: .seconds(60))
        #expect(waiting.started.isEmpty, "wave 2 waits for d1, running on b")
        _ = try await b.finish(Self.rollout.id, device: "d1", worker: "b", result: Self.upgraded, policy: policy)
        let last = try await a.claim(Self.rollout.id, worker: "a", policy: policy, capacity: 4, lease: .seconds(60))
        #expect(last.started.map(\.id) == ["d2", "d3"])
        await a.close()
        await b.close()
    }

    @Test func aDeadWorkersDeviceIsClaimedAgainOnlyAfterItsLeaseAndItsLateEndIsDropped() async throws {
        let (a, b) = try await Self.twoHosts(1)
        let policy = RolloutPolicy(parallel: 1)
        let taken = try await a.claim(Self.rollout.id, worker: "a", policy: policy, capacity: 1, lease: .seconds(2))
        #expect(taken.started.map(\.id) == ["d0"])
        let early = try await b.claim(Self.rollout.id, worker: "b", policy: policy, capacity: 1, lease: .seconds(60))
        #expect(early.started.isEmpty, "the lease holds")
        // Bounded by the event (b gets the device), not by a duration: the poll ends when it does.
        var reclaimed: RolloutClaim?
        for _ in 0..<600 where reclaimed == nil {
            try await Task.sleep(for: .milliseconds(100))
            let claim = try await b.claim(
                Self.rollout.id,
                worker: "b",
                policy: policy,
                capacity: 1,
                lease: .seconds(60)
            )
            if !claim.started.isEmpty { reclaimed = claim }
        }
        let record = try #require(reclaimed?.started.first)
        #expect(record.id == "d0" && record.worker == "b" && record.attempts == 2)
        let late = try await a.finish(Self.rollout.id, device: "d0", worker: "a", result: Self.upgraded, policy: policy)
        #expect(late == nil, "a's result is dropped: the device is b's")
        #expect(try await a.renew(Self.rollout.id, worker: "a", devices: ["d0"], lease: .seconds(60)).isEmpty)
        #expect(try await b.renew(Self.rollout.id, worker: "b", devices: ["d0"], lease: .seconds(60)) == ["d0"])
        await a.close()
        await b.close()
    }

    @Test func theBudgetHaltsEveryHostAndTheLastOneClosesThePendingDevices() async throws {
        let (a, b) = try await Self.twoHosts(4)
        let policy = RolloutPolicy(maxFailures: .count(0), parallel: 1)
        _ = try await a.claim(Self.rollout.id, worker: "a", policy: policy, capacity: 1, lease: .seconds(60))
        _ = try await b.claim(Self.rollout.id, worker: "b", policy: policy, capacity: 1, lease: .seconds(60))
        let refused = AttemptResult.failed(AttemptFailure(code: "device rejected", state: "uploading", message: "no"))
        _ = try await a.finish(Self.rollout.id, device: "d0", worker: "a", result: refused, policy: policy)
        let halted = try await a.claim(Self.rollout.id, worker: "a", policy: policy, capacity: 1, lease: .seconds(60))
        #expect(halted.started.isEmpty && halted.closed.isEmpty, "d1 still runs on b")
        #expect(halted.verdict == .halted(.budgetExceeded(failures: 1, limit: 0)))
        _ = try await b.finish(Self.rollout.id, device: "d1", worker: "b", result: Self.upgraded, policy: policy)
        let closing = try await b.claim(Self.rollout.id, worker: "b", policy: policy, capacity: 1, lease: .seconds(60))
        #expect(closing.closed.map(\.id) == ["d2", "d3"])
        #expect(closing.isComplete)
        #expect(closing.records.map(\.status) == [.failed, .upgraded, .skipped, .skipped])
        await a.close()
        await b.close()
    }

    @Test(arguments: ["mysql://h/db", "postgres://h", "postgres:///db", "postgres://h/db?sslmode=maybe"])
    func refusesURLsItCannotUse(_ url: String) async {
        await #expect(throws: RolloutStoreError.self) { _ = try await PostgresRolloutStore(url: url) }
    }
}
