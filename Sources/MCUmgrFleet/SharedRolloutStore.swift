import Foundation

/// A store several processes, on several hosts, share one rollout through. Under the rollout's
/// lock the store reads every record and applies what the rollout machine decides
/// (``RolloutStateMachine/claim(_:policy:worker:capacity:lease:at:)``): claims take the devices
/// the gates allow, with a lease that the claiming worker renews while it runs; a dead worker's
/// devices go back to pending once their lease expires.
public protocol SharedRolloutStore: RolloutStore {
    /// Frees expired leases, decides the gates from every record, ends the devices a halted
    /// rollout will not start once none runs anywhere, and claims the devices this worker may
    /// start now — all in one transaction under the rollout's lock.
    /// - Parameters:
    ///   - rollout: the rollout's identity.
    ///   - worker: this worker's name.
    ///   - policy: the rollout's policy (every worker must give the same).
    ///   - capacity: upgrades this worker may start now (its `parallel` less those it runs).
    ///   - lease: how long a claimed device stays this worker's without a renewal.
    /// - Returns: the claim.
    /// - Throws: ``RolloutStoreError``.
    func claim(_ rollout: String, worker: String, policy: RolloutPolicy, capacity: Int, lease: Duration) async throws
        -> RolloutClaim

    /// Records how an attempt ended — only while that attempt is still the device's and the
    /// device this worker's (a worker that lost its lease learns it here, and its result is
    /// dropped).
    /// - Parameters:
    ///   - rollout: the rollout's identity.
    ///   - device: the device's identity.
    ///   - attempt: the attempt's number (``DeviceRecord/attempts`` when it was claimed).
    ///   - worker: this worker's name.
    ///   - result: how the attempt ended.
    ///   - policy: the rollout's policy (retries, back-off).
    /// - Returns: the device's record, and when it is retried; `nil` when the attempt was not
    ///   the device's any more.
    /// - Throws: ``RolloutStoreError``.
    func finish(
        _ rollout: String,
        device: String,
        attempt: Int,
        worker: String,
        result: AttemptResult,
        policy: RolloutPolicy
    ) async throws -> (record: DeviceRecord, retryAt: Date?)?

    /// Extends the leases of this worker's running devices.
    /// - Parameters:
    ///   - rollout: the rollout's identity.
    ///   - worker: this worker's name.
    ///   - devices: the devices it runs.
    ///   - lease: the new lease, from now.
    /// - Returns: the devices still this worker's.
    /// - Throws: ``RolloutStoreError``.
    func renew(_ rollout: String, worker: String, devices: [String], lease: Duration) async throws -> Set<String>
}

/// What a claim decided.
public struct RolloutClaim: Sendable {
    /// The devices this worker starts now, their records already running.
    public var started: [DeviceRecord]
    /// Devices this claim ended (the rollout halted and nothing ran any more).
    public var closed: [DeviceRecord]
    /// Every record after the claim.
    public var records: [DeviceRecord]
    /// The gate the records are at.
    public var verdict: RolloutGates.Verdict
    /// The database's time.
    public var now: Date

    /// Creates a claim.
    public init(
        started: [DeviceRecord],
        closed: [DeviceRecord],
        records: [DeviceRecord],
        verdict: RolloutGates.Verdict,
        now: Date
    ) {
        self.started = started
        self.closed = closed
        self.records = records
        self.verdict = verdict
        self.now = now
    }

    /// Whether every device has ended.
    public var isComplete: Bool { records.allSatisfy(\.status.isFinal) }
}
