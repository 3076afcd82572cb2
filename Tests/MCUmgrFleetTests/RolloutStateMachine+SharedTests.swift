import Foundation
import MCUmgrDFU
import MCUmgrFleet
import Testing

/// The shared rollout's decisions as pure functions of the records: what a claim and an end
/// decide under the rollout's lock, without a database.
@Suite struct RolloutStateMachineSharedTests {
    typealias Machine = RolloutStateMachine
    static let t0 = Date(timeIntervalSince1970: 2_000_000)
    static let lease: Duration = .seconds(30)
    static let upgraded = AttemptResult.upgraded(versionBefore: "1.0.0", versionAfter: "2.0.0", uploadedBytes: 10)
    static let refused = AttemptFailure(code: .deviceRejected, state: .uploading, message: "NO_FREE_SLOT")
    static let dropped = AttemptFailure(code: .linkFailed, state: .uploading, message: "gone")

    static func records(_ count: Int) -> [DeviceRecord] {
        (0..<count).map { DeviceRecord(id: "d\($0)", url: "udp://10.0.0.\($0 + 1):1337", position: $0) }
    }

    /// A record running on `worker`, its lease ending at `t0 + leaseEnd` seconds (or none).
    static func running(_ record: DeviceRecord, _ worker: String, leaseEnd: Double?, phase: RolloutPhase = .wave(0))
        -> DeviceRecord
    {
        var record = RolloutTransitions.start(record, phase: phase, worker: worker, at: t0)
        record.leaseUntil = leaseEnd.map { t0.addingTimeInterval($0) }
        return record
    }

    @Test func aLapsedLeaseMakesTheDevicePendingAgainAndClaimable() {
        var records = Self.records(2)
        records[0] = Self.running(records[0], "w1", leaseEnd: -1)
        let claim = Machine.claim(
            records,
            policy: RolloutPolicy(),
            worker: "w2",
            capacity: 4,
            lease: Self.lease,
            at: Self.t0
        )
        #expect(claim.writes.map(\.record.id) == ["d0"])
        #expect(claim.writes.first?.record.status == .pending && claim.writes.first?.leaseUntil == nil)
        #expect(claim.candidates.map(\.index) == [0, 1])
    }

    @Test func aLeaseThatHoldsKeepsTheDeviceItsWorkers() {
        var records = Self.records(2)
        records[0] = Self.running(records[0], "w1", leaseEnd: 0)
        let claim = Machine.claim(
            records,
            policy: RolloutPolicy(),
            worker: "w2",
            capacity: 4,
            lease: Self.lease,
            at: Self.t0
        )
        #expect(claim.writes.isEmpty)
        #expect(claim.records[0].status == .running)
        #expect(claim.candidates.map(\.index) == [1])
    }

    @Test func aRunningDeviceWithoutALeaseGetsOneFromNowNotForEver() {
        var records = Self.records(1)
        records[0] = Self.running(records[0], "w1", leaseEnd: nil)
        let claim = Machine.claim(
            records,
            policy: RolloutPolicy(),
            worker: "w2",
            capacity: 4,
            lease: Self.lease,
            at: Self.t0
        )
        #expect(claim.writes.count == 1)
        #expect(claim.writes.first?.record.status == .running)
        #expect(claim.writes.first?.leaseUntil == Self.t0.addingTimeInterval(30))
        #expect(claim.candidates.isEmpty)
    }

    @Test(arguments: [0, 1, 3])
    func theCapacityBoundsTheCandidates(_ capacity: Int) {
        let claim = Machine.claim(
            Self.records(5),
            policy: RolloutPolicy(parallel: 8),
            worker: "w1",
            capacity: capacity,
            lease: Self.lease,
            at: Self.t0
        )
        #expect(claim.candidates.map(\.index) == Array(0..<capacity))
    }

    @Test func theCanaryIsOneDeviceAcrossWorkers() {
        var records = Self.records(4)
        let policy = RolloutPolicy(canary: 1, parallel: 4)
        let first = Machine.claim(records, policy: policy, worker: "w1", capacity: 4, lease: Self.lease, at: Self.t0)
        #expect(first.candidates.map(\.index) == [0] && first.candidates.map(\.phase) == [.canary])
        let started = Machine.started(records[0], phase: .canary, worker: "w1", lease: Self.lease, at: Self.t0)
        #expect(started.record.status == .running && started.record.attempts == 1)
        #expect(started.leaseUntil == Self.t0.addingTimeInterval(30))
        records[0] = started.record
        records[0].leaseUntil = started.leaseUntil
        let second = Machine.claim(records, policy: policy, worker: "w2", capacity: 4, lease: Self.lease, at: Self.t0)
        #expect(second.candidates.isEmpty)
    }

    @Test func aHaltClosesThePendingDevicesOnlyOnceNothingRuns() {
        var records = Self.records(4)
        let policy = RolloutPolicy(canary: 1, parallel: 4)
        records[0] = Self.running(records[0], "w1", leaseEnd: 60, phase: .canary)
        records[0].status = .failed
        records[1] = Self.running(records[1], "w2", leaseEnd: 60)
        let whileRunning = Machine.claim(
            records,
            policy: policy,
            worker: "w1",
            capacity: 4,
            lease: Self.lease,
            at: Self.t0
        )
        #expect(whileRunning.verdict == .halted(.canaryFailed(device: "d0")))
        #expect(whileRunning.closed.isEmpty && whileRunning.candidates.isEmpty)
        records[1].status = .upgraded
        let after = Machine.claim(records, policy: policy, worker: "w1", capacity: 4, lease: Self.lease, at: Self.t0)
        #expect(after.closed.map(\.id) == ["d2", "d3"])
        #expect(after.closed.allSatisfy { $0.status == .skipped })
        #expect(after.writes.map(\.record.id) == ["d2", "d3"])
    }

    @Test func anEndIsTheAttemptsOnlyWhileItIsTheWorkersCurrentOne() throws {
        var records = Self.records(1)
        records[0] = Self.running(records[0], "w1", leaseEnd: 60)
        let policy = RolloutPolicy()
        let end = { (worker: String, attempt: Int) -> (record: DeviceRecord, retryAt: Date?)? in
            Machine.finish(
                records,
                device: "d0",
                attempt: attempt,
                worker: worker,
                result: Self.upgraded,
                policy: policy,
                at: Self.t0
            )
        }
        #expect(end("w2", 1) == nil)
        #expect(end("w1", 2) == nil)
        let ended = try #require(end("w1", 1))
        #expect(ended.record.status == .upgraded && ended.record.leaseUntil == nil && ended.retryAt == nil)
        records[0].status = .pending
        #expect(end("w1", 1) == nil)
    }

    @Test func aLinkFailureIsRetriedOnlyWhileTheRolloutStillStartsDevices() throws {
        var records = Self.records(3)
        let policy = RolloutPolicy(maxFailures: .count(0), linkRetries: 2, backoff: .seconds(10))
        records[0] = Self.running(records[0], "w1", leaseEnd: 60)
        let rolling = try #require(
            Machine.finish(
                records,
                device: "d0",
                attempt: 1,
                worker: "w1",
                result: .linkFailed(Self.dropped, reached: true),
                policy: policy,
                at: Self.t0
            )
        )
        #expect(rolling.record.status == .pending && rolling.retryAt == Self.t0.addingTimeInterval(10))
        records[1].status = .failed
        records[1].failure = Self.refused
        let halted = try #require(
            Machine.finish(
                records,
                device: "d0",
                attempt: 1,
                worker: "w1",
                result: .linkFailed(Self.dropped, reached: true),
                policy: policy,
                at: Self.t0
            )
        )
        #expect(halted.record.status == .pending && halted.retryAt == nil)
    }

    static func inventory(_ urls: [String]) throws -> [Inventory.Device] {
        try Inventory(parsing: urls.enumerated().map { "\($1) d\($0)" }.joined(separator: "\n")).devices
    }

    @Test func joiningKeepsARunningDevicesRecordAndLease() throws {
        var records = Self.records(2)
        records[0] = Self.running(records[0], "w1", leaseEnd: 20)
        let devices = try Self.inventory(["udp://10.0.0.1:1337", "udp://10.0.0.2:1337"])
        let writes = try Machine.prepareShared(records, devices: devices, retryFailed: false, at: Self.t0)
        #expect(writes.map(\.record.status) == [.running, .pending])
        #expect(writes[0].leaseUntil == Self.t0.addingTimeInterval(20) && writes[0].record.worker == "w1")
        #expect(writes.allSatisfy { $0.record.leaseUntil == nil })
    }

    @Test func aNameRunningAtAnotherURLIsRefusedWhileItsLeaseHoldsAndPlannedAfreshAfter() throws {
        var records = Self.records(1)
        records[0] = Self.running(records[0], "w1", leaseEnd: 0)
        let devices = try Self.inventory(["udp://10.9.9.9:1337"])
        #expect {
            try Machine.prepareShared(records, devices: devices, retryFailed: false, at: Self.t0)
        } throws: { error in
            let message = (error as? RolloutStoreError)?.message ?? ""
            return message.contains("d0 is being upgraded at udp://10.0.0.1:1337 by worker w1")
                && message.contains("udp://10.9.9.9:1337")
        }
        let later = try Machine.prepareShared(
            records,
            devices: devices,
            retryFailed: false,
            at: Self.t0.addingTimeInterval(1)
        )
        #expect(later.map(\.record.status) == [.pending] && later[0].record.url == "udp://10.9.9.9:1337")
        #expect(later[0].record.attempts == 0 && later[0].leaseUntil == nil)
    }
}
