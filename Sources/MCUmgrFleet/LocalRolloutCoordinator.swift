import Foundation

/// One host's rollout: every decision is the ``RolloutStateMachine``'s; the records it changes
/// are written to the store before the driver acts on them.
struct LocalRolloutCoordinator: RolloutCoordinator {
    let store: any RolloutStore
    let rollout: String
    let clock: FleetClock
    private var machine: RolloutStateMachine
    private var saved: [DeviceRecord]
    /// Actions the machine answered to an end, performed by the next step.
    private var buffered: [RolloutStateMachine.Action] = []
    private var begun = false
    private var interruptSent = false

    init(store: any RolloutStore, rollout: String, records: [DeviceRecord], fleet: FleetUpgrade) {
        self.store = store
        self.rollout = rollout
        clock = fleet.clock
        machine = RolloutStateMachine(records: records, policy: fleet.policy, worker: fleet.worker)
        saved = records
    }

    var pollInterval: Duration? { nil }

    mutating func step(capacity: Int, interrupted: Bool, running: Int) async throws -> RolloutStep {
        var actions = buffered
        buffered = []
        let now = clock.now
        if !begun {
            begun = true
            actions += machine.handle(.start, at: now)
        } else if interrupted, !interruptSent {
            interruptSent = true
            actions += machine.handle(.interrupt, at: now)
        } else {
            actions += machine.handle(.wake, at: now)
        }
        var step = RolloutStep()
        step.ended = try await persist()
        for action in actions {
            switch action {
            case .enterPhase(let phase): step.phases.append(phase)
            case .start(let device, _, _): if let record = machine.record(device) { step.started.append(record) }
            case .retry: break  // reported by finish
            case .halt(let reason): step.halt = reason
            case .finish(let outcome): step.outcome = outcome
            }
        }
        return step
    }

    mutating func finish(device: String, attempt: Int, result: AttemptResult) async throws
        -> (record: DeviceRecord, at: Date)?
    {
        let actions = machine.handle(.ended(device: device, result), at: clock.now)
        buffered += actions
        for case .retry(device, let at, _) in actions {
            if let record = machine.record(device) { return (record, at) }
        }
        return nil
    }

    mutating func versionRead(device: String, attempt: Int, version: String) async throws {
        buffered += machine.handle(.versionRead(device: device, version), at: clock.now)
    }

    func lease(for device: String) -> DeviceLease? { nil }

    mutating func renew(running: [String]) async throws -> [String] { [] }

    mutating func release(_ device: String) async {}

    /// Writes the records that changed; returns those that ended with this write.
    private mutating func persist() async throws -> [DeviceRecord] {
        let records = machine.records
        let changed = records.enumerated().filter { $0.offset >= saved.count || saved[$0.offset] != $0.element }
        guard !changed.isEmpty else { return [] }
        try await store.save(changed.map(\.element), rollout: rollout)
        let ended = changed.filter { index, record in
            record.status.isFinal && !(index < saved.count && saved[index].status.isFinal)
        }
        saved = records
        return ended.map(\.element)
    }
}
