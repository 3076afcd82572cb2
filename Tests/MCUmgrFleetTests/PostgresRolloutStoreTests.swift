import Foundation
import MCUmgrConnect
import MCUmgrDFU
import MCUmgrFleet
import MCUmgrFleetPostgres
import SMPTestSupport
import Testing

/// The shared store against a real PostgreSQL server: two stores are two hosts.
@Suite(.requiring(TestPostgres.enabled, "no PostgreSQL: set MCUMGR_TEST_POSTGRES (scripts/postgres-test-server.sh)"))
struct PostgresRolloutStoreTests {
    static let rollout = RolloutDescription(id: "r1", file: "app.bin", mode: "confirm-only", versions: ["2.0.0"])
    static let upgraded = AttemptResult.upgraded(versionBefore: "1.0.0", versionAfter: "2.0.0", uploadedBytes: 10)
    static let id = rollout.id

    static func devices(_ count: Int) throws -> [Inventory.Device] {
        try (0..<count).map {
            Inventory.Device(url: try ConnectionURL(parsing: "udp://10.0.0.\($0 + 1):1337"), name: "d\($0)")
        }
    }

    /// Two hosts on one fresh database, closed whatever the body does (PostgresNIO traps on a
    /// connection released unclosed).
    static func twoHosts(
        _ count: Int,
        _ body: (PostgresRolloutStore, PostgresRolloutStore) async throws -> Void
    ) async throws {
        let url = try await TestPostgres.freshDatabase()
        let a = try await PostgresRolloutStore(url: url)
        let b: PostgresRolloutStore
        do {
            b = try await PostgresRolloutStore(url: url)
        } catch {
            await a.close()
            throw error
        }
        do {
            _ = try await a.prepare(rollout, devices: try devices(count), retryFailed: false)
            _ = try await b.prepare(rollout, devices: try devices(count), retryFailed: false)
            try await body(a, b)
        } catch {
            await a.close()
            await b.close()
            throw error
        }
        await a.close()
        await b.close()
    }

    static func claim(_ store: PostgresRolloutStore, _ worker: String, _ policy: RolloutPolicy, lease: Int = 60)
        async throws -> RolloutClaim
    {
        try await store.claim(id, worker: worker, policy: policy, capacity: policy.parallel, lease: .seconds(lease))
    }

    static func finish(
        _ store: PostgresRolloutStore,
        _ device: String,
        attempt: Int = 1,
        _ worker: String,
        _ policy: RolloutPolicy,
        result: AttemptResult = upgraded
    ) async throws -> (record: DeviceRecord, retryAt: Date?)? {
        try await store.finish(id, device: device, attempt: attempt, worker: worker, result: result, policy: policy)
    }

    @Test func everyRolloutIsListedTheLastStartedFirst() async throws {
        let store = try await PostgresRolloutStore(url: try await TestPostgres.freshDatabase())
        try await FleetHarness.listsEveryRolloutNewestFirst(store)
    }

    /// A record binds the name to the URL: the same name at another URL is another device,
    /// planned afresh — unless a worker upgrades the recorded one right now (the workers were
    /// given different inventories): that is refused in one line, and nothing is written.
    @Test func aNameAtAnotherURLIsPlannedAfreshUnlessAWorkerRunsTheRecordedOne() async throws {
        try await Self.twoHosts(2) { a, b in
            let policy = RolloutPolicy(parallel: 1)
            #expect(try await Self.claim(a, "a", policy).started.map(\.id) == ["d0"])
            #expect(try await Self.finish(a, "d0", "a", policy)?.record.status == .upgraded)
            #expect(try await Self.claim(a, "a", policy).started.map(\.id) == ["d1"])
            let moved = try ["udp://10.0.1.1:1337", "udp://10.0.1.2:1337"].enumerated().map {
                Inventory.Device(url: try ConnectionURL(parsing: $0.element), name: "d\($0.offset)")
            }
            await #expect(
                throws: RolloutStoreError(
                    "d1 is being upgraded at udp://10.0.0.2:1337 by worker a, but this inventory has udp://10.0.1.2:1337; give every worker the same inventory, or this one another --state"
                )
            ) {
                _ = try await b.prepare(Self.rollout, devices: moved, retryFailed: false)
            }
            #expect(try await b.rollout(Self.id)?.1.map(\.status) == [.upgraded, .running], "nothing was written")
            #expect(try await Self.finish(a, "d1", "a", policy)?.record.status == .upgraded)
            let again = try await b.prepare(Self.rollout, devices: moved, retryFailed: false)
            #expect(
                again == [
                    DeviceRecord(id: "d0", url: "udp://10.0.1.1:1337", position: 0),
                    DeviceRecord(id: "d1", url: "udp://10.0.1.2:1337", position: 1),
                ]
            )
            #expect(try await Self.claim(b, "b", policy).started.map(\.id) == ["d0"])
        }
    }

    @Test func theCanaryIsClaimedOnceAcrossHostsAndTheWavesWaitForIt() async throws {
        try await Self.twoHosts(4) { a, b in
            let policy = RolloutPolicy(canary: 1, waves: [.percent(50), .percent(100)], parallel: 4)
            let first = try await Self.claim(a, "a", policy)
            let second = try await Self.claim(b, "b", policy)
            #expect(first.started.map(\.id) == ["d0"] && first.started.first?.phase == .canary)
            #expect(second.started.isEmpty, "the canary goes alone: \(second.started.map(\.id))")
            #expect(try await Self.finish(a, "d0", "a", policy)?.record.status == .upgraded)
            let wave = try await Self.claim(b, "b", policy)
            #expect(wave.started.map(\.id) == ["d1"], "wave 1 is positions 0-1")
            let waiting = try await Self.claim(a, "a", policy)
            #expect(waiting.started.isEmpty, "wave 2 waits for d1, running on b")
            _ = try await Self.finish(b, "d1", "b", policy)
            let last = try await Self.claim(a, "a", policy)
            #expect(last.started.map(\.id) == ["d2", "d3"])
        }
    }

    @Test func aDeadWorkersDeviceIsClaimedAgainOnlyAfterItsLeaseAndItsLateEndIsDropped() async throws {
        try await Self.twoHosts(1) { a, b in
            let policy = RolloutPolicy(parallel: 1)
            // A lease long enough that a loaded machine cannot outlast it between two claims…
            #expect(try await Self.claim(a, "a", policy, lease: 600).started.map(\.id) == ["d0"])
            #expect(try await Self.claim(b, "b", policy).started.isEmpty, "the lease holds")
            // …then a's last renewal, a short one, and a stops renewing: it died.
            #expect(try await a.renew(Self.id, worker: "a", devices: ["d0"], lease: .seconds(1)) == ["d0"])
            // Bounded by the event (b gets the device), not by a duration.
            var reclaimed: DeviceRecord?
            for _ in 0..<600 where reclaimed == nil {
                try await Task.sleep(for: .milliseconds(100))
                reclaimed = try await Self.claim(b, "b", policy).started.first
            }
            let record = try #require(reclaimed)
            #expect(record.id == "d0" && record.worker == "b" && record.attempts == 2)
            #expect(try await Self.finish(a, "d0", "a", policy) == nil, "a's result is dropped: the device is b's")
            #expect(try await a.renew(Self.id, worker: "a", devices: ["d0"], lease: .seconds(60)).isEmpty)
            #expect(try await b.renew(Self.id, worker: "b", devices: ["d0"], lease: .seconds(60)) == ["d0"])
        }
    }

    /// A worker that starts (prepares) while another holds a lease keeps that lease: when the
    /// holder dies, its device comes back once the lease runs out. (`prepare` used to write every
    /// lease as none, and a running device without a lease never expired: the rollout wedged.)
    @Test func aWorkerThatJoinsLateKeepsTheRunningDevicesLeasesSoADeadWorkersDeviceComesBack() async throws {
        try await Self.twoHosts(1) { a, b in
            let policy = RolloutPolicy(parallel: 1)
            #expect(try await Self.claim(a, "a", policy, lease: 1).started.map(\.id) == ["d0"])
            let joined = try await b.prepare(Self.rollout, devices: try Self.devices(1), retryFailed: false)
            #expect(joined.map(\.status) == [.running] && joined.first?.worker == "a")
            // a never renews: it died. Bounded by the event (b gets the device), not by a duration.
            var reclaimed: DeviceRecord?
            for _ in 0..<600 where reclaimed == nil {
                try await Task.sleep(for: .milliseconds(100))
                reclaimed = try await Self.claim(b, "b", policy).started.first
            }
            let record = try #require(reclaimed, "a's device stayed running without a lease")
            #expect(record.id == "d0" && record.worker == "b" && record.attempts == 2)
        }
    }

    /// A worker that stalled past its lease and claimed its own device again: the end of its old
    /// attempt is not the device's (found by the three-worker test: a stale "upgraded" had opened
    /// the next wave while the new attempt still ran).
    @Test func theEndOfAnAttemptTheDeviceNoLongerRunsIsDropped() async throws {
        try await Self.twoHosts(1) { a, _ in
            let policy = RolloutPolicy(parallel: 1)
            _ = try await Self.claim(a, "a", policy, lease: 1)
            var again: DeviceRecord?
            for _ in 0..<600 where again == nil {
                try await Task.sleep(for: .milliseconds(100))
                again = try await Self.claim(a, "a", policy).started.first
            }
            #expect(again?.attempts == 2)
            #expect(try await Self.finish(a, "d0", attempt: 1, "a", policy) == nil)
            #expect(try await Self.finish(a, "d0", attempt: 2, "a", policy)?.record.status == .upgraded)
        }
    }

    @Test func theBudgetHaltsEveryHostAndTheLastOneClosesThePendingDevices() async throws {
        try await Self.twoHosts(4) { a, b in
            let policy = RolloutPolicy(maxFailures: .count(0), parallel: 1)
            _ = try await Self.claim(a, "a", policy)
            _ = try await Self.claim(b, "b", policy)
            let refused = AttemptResult.failed(
                AttemptFailure(code: .deviceRejected, state: .uploading, message: "no")
            )
            _ = try await Self.finish(a, "d0", "a", policy, result: refused)
            let halted = try await Self.claim(a, "a", policy)
            #expect(halted.started.isEmpty && halted.closed.isEmpty, "d1 still runs on b")
            #expect(halted.verdict == .halted(.budgetExceeded(failures: 1, limit: 0)))
            _ = try await Self.finish(b, "d1", "b", policy)
            let closing = try await Self.claim(b, "b", policy)
            #expect(closing.closed.map(\.id) == ["d2", "d3"])
            #expect(closing.isComplete)
            #expect(closing.records.map(\.status) == [.failed, .upgraded, .skipped, .skipped])
        }
    }

    /// A database whose layout is newer than this version reads is refused before anything is
    /// written; one written before the layout was versioned is marked layout 1.
    @Test func aDatabaseOfANewerLayoutIsRefusedAndAnOlderOneIsMarked() async throws {
        let newer = try await TestPostgres.freshDatabase()
        _ = try await TestPostgres.query(
            newer,
            "CREATE TABLE mcumgr_schema (version INTEGER NOT NULL); INSERT INTO mcumgr_schema VALUES (9)"
        )
        let error = await #expect(throws: RolloutStoreError.self) { _ = try await PostgresRolloutStore(url: newer) }
        #expect(
            error?.message.contains("of layout 9, written by a newer mcumgr") == true,
            "\(String(describing: error))"
        )
        let older = try await TestPostgres.freshDatabase()
        let store = try await PostgresRolloutStore(url: older)
        await store.close()
        #expect(try await TestPostgres.query(older, "SELECT version FROM mcumgr_schema") == [["1"]])
    }

    @Test(arguments: ["mysql://h/db", "postgres://h", "postgres:///db", "postgres://h/db?sslmode=maybe"])
    func refusesURLsItCannotUse(_ url: String) async {
        await #expect(throws: RolloutStoreError.self) { _ = try await PostgresRolloutStore(url: url) }
    }
}
