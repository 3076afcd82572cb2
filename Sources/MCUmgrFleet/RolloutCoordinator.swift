import Foundation

/// What the driver learns from one step of a rollout: what to announce, what to start, which
/// devices ended, and whether the rollout is over for this run.
struct RolloutStep {
    /// Phases that began, in order.
    var phases: [RolloutPhase] = []
    /// The rollout halted (announced once).
    var halt: RolloutGates.HaltReason?
    /// Devices to start now, their records already running.
    var started: [DeviceRecord] = []
    /// Devices that ended since the last step.
    var ended: [DeviceRecord] = []
    /// The rollout is over for this run.
    var outcome: RolloutOutcome?
}

/// Where the one fleet driver takes its rollout's decisions from: the rollout machine of one
/// host (``LocalRolloutCoordinator``), or the same machine's decisions in a shared store's claims
/// (``SharedRolloutCoordinator``). The driver only starts, follows and cancels upgrades.
protocol RolloutCoordinator {
    /// How often to look again while nothing happens here (other workers' devices end, leases
    /// lapse); `nil` when only this run's events change anything.
    var pollInterval: Duration? { get }

    /// Decides what starts now (and what ended), writing every change to the store first.
    /// - Parameters:
    ///   - capacity: upgrades this run may start now.
    ///   - interrupted: the user interrupted: nothing starts; the outcome comes once nothing runs.
    ///   - running: upgrades running here.
    /// - Throws: ``RolloutStoreError``.
    mutating func step(capacity: Int, interrupted: Bool, running: Int) async throws -> RolloutStep

    /// Records how an attempt ended (its device's end is reported by the next step).
    /// - Returns: the device's record and when it starts again, for a retry.
    /// - Throws: ``RolloutStoreError``.
    mutating func finish(device: String, attempt: Int, result: AttemptResult) async throws
        -> (record: DeviceRecord, at: Date)?

    /// Records the version a running device said it runs.
    /// - Throws: ``RolloutStoreError``.
    mutating func versionRead(device: String, attempt: Int, version: String) async throws

    /// The lease every frame to the device waits for, when devices are leased.
    func lease(for device: String) -> DeviceLease?

    /// Renews the leases of the devices running here when due.
    /// - Parameter running: the devices running here.
    /// - Returns: the devices another worker has taken (their leases already revoked).
    /// - Throws: ``RolloutStoreError``.
    mutating func renew(running: [String]) async throws -> [String]

    /// The device's upgrade here is over (ended, cancelled, stale): nothing more is sent to it.
    mutating func release(_ device: String) async
}

extension RolloutStore {
    /// The coordinator of a rollout in this store.
    func coordinator(
        _ rollout: RolloutDescription,
        records: [DeviceRecord],
        fleet: FleetUpgrade
    ) -> any RolloutCoordinator {
        if let shared = sharing {
            return SharedRolloutCoordinator(store: shared, rollout: rollout.id, records: records, fleet: fleet)
        }
        return LocalRolloutCoordinator(store: self, rollout: rollout.id, records: records, fleet: fleet)
    }
}
