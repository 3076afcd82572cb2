import Foundation

/// This worker's part of a rollout shared through a ``SharedRolloutStore``: the rollout machine's
/// decisions, taken in the store's transactions under the rollout's lock
/// (``RolloutStateMachine/claim(_:policy:worker:capacity:lease:at:)``); the leases of the devices
/// it claimed, renewed every third of a lease.
struct SharedRolloutCoordinator: RolloutCoordinator {
    let store: any SharedRolloutStore
    let rollout: String
    let fleet: FleetUpgrade
    private var leases: [String: DeviceLease] = [:]
    private var announcedPhase: RolloutPhase?
    private var announcedHalt = false
    private var lastRenewal: Duration = .zero
    /// Devices whose end a finish recorded, reported by the next step.
    private var buffered: [DeviceRecord] = []
    /// The devices this worker started in this run, and those that had ended before it: what the
    /// outcome says this run saw, and what it only shows.
    private var started: Set<String> = []
    private let endedBefore: Set<String>

    init(store: any SharedRolloutStore, rollout: String, records: [DeviceRecord], fleet: FleetUpgrade) {
        self.store = store
        self.rollout = rollout
        self.fleet = fleet
        endedBefore = Set(records.filter(\.status.isFinal).map(\.id))
    }

    var pollInterval: Duration? { fleet.pollInterval }

    mutating func step(capacity: Int, interrupted: Bool, running: Int) async throws -> RolloutStep {
        var step = RolloutStep()
        step.ended = buffered
        buffered = []
        if interrupted {
            guard running == 0 else { return step }
            let records = try await store.rollout(rollout)?.1 ?? []
            step.outcome = outcome(records, halt: nil, interrupted: true)
            return step
        }
        let asked = fleet.clock.elapsed
        let claim = try await store.claim(
            rollout,
            worker: fleet.worker,
            policy: fleet.policy,
            capacity: capacity,
            lease: fleet.lease
        )
        step.ended += claim.closed
        var halt: RolloutGates.HaltReason?
        if case .halted(let reason) = claim.verdict {
            halt = reason
            if !announcedHalt { step.halt = reason }
            announcedHalt = true
        }
        for record in claim.started {
            if let phase = record.phase, phase != announcedPhase {
                announcedPhase = phase
                step.phases.append(phase)
            }
            started.insert(record.id)
            // A lease of an earlier attempt here (this worker lost the device and took it back)
            // is over: its upgrade sends nothing more.
            await leases[record.id]?.revoke()
            leases[record.id] = DeviceLease(asked: asked, lease: fleet.lease, clock: fleet.clock)
            step.started.append(record)
        }
        if claim.isComplete, running == 0 {
            step.outcome = outcome(claim.records, halt: halt, interrupted: false)
        }
        return step
    }

    private func outcome(_ records: [DeviceRecord], halt: RolloutGates.HaltReason?, interrupted: Bool)
        -> RolloutOutcome
    {
        RolloutOutcome(
            records: records,
            halt: halt,
            interrupted: interrupted,
            started: started,
            endedBefore: endedBefore,
            worker: fleet.worker
        )
    }

    mutating func finish(device: String, attempt: Int, result: AttemptResult) async throws
        -> (record: DeviceRecord, at: Date)?
    {
        let ended = try await store.finish(
            rollout,
            device: device,
            attempt: attempt,
            worker: fleet.worker,
            result: result,
            policy: fleet.policy
        )
        guard let (record, retryAt) = ended else { return nil }  // the lease was lost: not ours
        if record.status.isFinal { buffered.append(record) }
        return retryAt.map { (record, $0) }
    }

    mutating func versionRead(device: String, attempt: Int, version: String) async throws {
        // The launcher wrote it to the store as the device answered; nothing is held here.
    }

    func lease(for device: String) -> DeviceLease? { leases[device] }

    /// Renews the leases a third of a lease after the last renewal. Between the end of a lease
    /// and the renewal that finds it lost, the upgrade sends nothing (``DeviceLease``), so two
    /// workers never upgrade one device at once.
    mutating func renew(running: [String]) async throws -> [String] {
        guard fleet.clock.elapsed - lastRenewal >= fleet.lease / 3, !running.isEmpty else { return [] }
        let asked = fleet.clock.elapsed
        lastRenewal = asked
        let mine = try await store.renew(rollout, worker: fleet.worker, devices: running, lease: fleet.lease)
        var lost: [String] = []
        for device in running {
            guard mine.contains(device) else {
                await release(device)
                lost.append(device)
                continue
            }
            await leases[device]?.renewed(asked: asked, lease: fleet.lease)
        }
        return lost
    }

    mutating func release(_ device: String) async {
        await leases.removeValue(forKey: device)?.revoke()
    }
}
