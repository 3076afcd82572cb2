import Foundation
import Logging
import MCUboot
import MCUmgrDFU
import SMPCore
import SMPLink

/// Performs a ``RolloutStateMachine``'s actions: starts the upgrades, feeds back how each ended,
/// writes every change to the store before acting on it; decides nothing. One per run.
struct FleetDriver {
    /// What the driver's loop waits for.
    enum Message: Sendable {
        /// A device's upgrade attempt (its number) ended.
        case ended(String, attempt: Int, AttemptResult)
        /// A device's upgrade attempt read the version the device runs.
        case versionRead(String, attempt: Int, String)
        /// A retry's back-off is over.
        case wake
        /// The user interrupted.
        case interrupt
    }

    let fleet: FleetUpgrade
    let package: FirmwarePackage
    let devices: [String: Inventory.Device]
    let store: any RolloutStore
    let events: AsyncThrowingStream<FleetEvent, any Error>.Continuation
    let inbox: AsyncStream<Message>.Continuation
    private var runs: [String: FirmwareUpgradeRun] = [:]
    private var saved: [DeviceRecord] = []
    private var interrupted = false

    init(
        fleet: FleetUpgrade,
        package: FirmwarePackage,
        devices: [String: Inventory.Device],
        store: any RolloutStore,
        events: AsyncThrowingStream<FleetEvent, any Error>.Continuation,
        inbox: AsyncStream<Message>.Continuation
    ) {
        self.fleet = fleet
        self.package = package
        self.devices = devices
        self.store = store
        self.events = events
        self.inbox = inbox
    }

    mutating func run(_ rollout: RolloutDescription, devices list: [Inventory.Device], messages: AsyncStream<Message>)
        async
    {
        do {
            let records = try await store.prepare(
                rollout,
                devices: list,
                retryFailed: fleet.retryFailed,
                events: events
            )
            saved = records
            var machine = RolloutStateMachine(records: records, policy: fleet.policy, worker: fleet.worker)
            try await withThrowingTaskGroup(of: Void.self) { group in
                var iterator = messages.makeAsyncIterator()
                var actions = machine.handle(.start, at: Date())
                do {
                    while true {
                        try await persist(machine, rollout: rollout.id)
                        if perform(actions, machine: machine, group: &group) { break }
                        guard let message = await iterator.next() else { break }
                        actions = handle(message, machine: &machine)
                    }
                } catch {
                    // The group waits for its children before it rethrows, and they wait for the
                    // upgrades: a store that failed stops the rollout now, not after every
                    // upgrade in flight has ended unrecorded.
                    for run in runs.values { run.cancel() }
                    throw error
                }
                group.cancelAll()
            }
            events.finish()
        } catch {
            for run in runs.values { run.cancel() }
            events.finish(throwing: error)
        }
    }

    private mutating func handle(_ message: Message, machine: inout RolloutStateMachine) -> [RolloutStateMachine.Action]
    {
        switch message {
        case .ended(let device, _, let result):
            runs[device] = nil
            return machine.handle(.ended(device: device, result), at: Date())
        case .versionRead(let device, _, let version):
            return machine.handle(.versionRead(device: device, version), at: Date())
        case .wake:
            return machine.handle(.wake, at: Date())
        case .interrupt:
            interrupted = true
            for run in runs.values { run.cancel() }
            return machine.handle(.interrupt, at: Date())
        }
    }

    /// Writes the records that changed, and reports the devices that ended.
    private mutating func persist(_ machine: RolloutStateMachine, rollout: String) async throws {
        let changed = machine.records.enumerated().filter { $0.offset >= saved.count || saved[$0.offset] != $0.element }
        guard !changed.isEmpty else { return }
        try await store.save(changed.map(\.element), rollout: rollout)
        for (index, record) in changed
        where record.status.isFinal && !(index < saved.count && saved[index].status.isFinal) {
            events.yield(.ended(record))
        }
        saved = machine.records
    }

    /// Performs the actions; returns whether the rollout finished.
    private mutating func perform(
        _ actions: [RolloutStateMachine.Action],
        machine: RolloutStateMachine,
        group: inout ThrowingTaskGroup<Void, any Error>
    ) -> Bool {
        for action in actions {
            switch action {
            case .enterPhase(let phase):
                events.yield(.phase(phase))
            case .start(let device, _, _):
                guard let record = machine.record(device) else { continue }
                events.yield(.started(record))
                start(record, group: &group)
            case .retry(let device, let at, _):
                if let record = machine.record(device) { events.yield(.retrying(record, at: at)) }
                let inbox = self.inbox
                group.addTask {
                    let wait = max(0, at.timeIntervalSinceNow)
                    try? await Task.sleep(for: .milliseconds(Int64(wait * 1000) + 1))
                    inbox.yield(.wake)
                }
            case .halt(let reason):
                events.yield(.halted(reason))
            case .finish(let outcome):
                events.yield(.finished(outcome))
                return true
            }
        }
        return false
    }

    private mutating func start(_ record: DeviceRecord, group: inout ThrowingTaskGroup<Void, any Error>) {
        let id = record.id
        let inbox = self.inbox
        guard let device = devices[id] else {
            inbox.yield(
                .ended(
                    id,
                    attempt: record.attempts,
                    .failed(AttemptFailure(code: .notInInventory, state: nil, message: "not in the inventory"))
                )
            )
            return
        }
        let transport: any SMPTransport
        do {
            transport = try fleet.makeTransport(device)
        } catch {
            let failure = AttemptFailure(code: .transportUnavailable, state: nil, message: "\(error)")
            inbox.yield(.ended(id, attempt: record.attempts, .failed(failure)))
            return
        }
        let upgrade = FirmwareUpgrade(
            transport: transport,
            configuration: fleet.configuration,
            clientConfiguration: fleet.clientConfiguration,
            logger: fleet.logger
        )
        let run = upgrade.run(package)
        runs[id] = run
        let events = self.events
        let attempt = record.attempts
        group.addTask {
            let result = await Self.outcome(of: run, device: id, attempt: attempt, events: events, inbox: inbox)
            inbox.yield(.ended(id, attempt: attempt, result))
        }
    }

    /// Follows one upgrade to its end and classifies it.
    static func outcome(
        of run: FirmwareUpgradeRun,
        device: String,
        attempt: Int,
        events: AsyncThrowingStream<FleetEvent, any Error>.Continuation,
        inbox: AsyncStream<Message>.Continuation
    ) async -> AttemptResult {
        do {
            for try await event in run {
                events.yield(.upgrade(device: device, event))
                if case .imagesRead(let slots) = event, let version = runningVersion(slots) {
                    inbox.yield(.versionRead(device, attempt: attempt, version))
                }
                guard case .completed(let summary) = event else { continue }
                let before = runningVersion(summary.before)
                if summary.isUpToDate { return .alreadyCurrent(version: before) }
                return .upgraded(
                    versionBefore: before,
                    versionAfter: runningVersion(summary.after),
                    uploadedBytes: summary.uploadedBytes
                )
            }
            return .interrupted
        } catch let error as FirmwareUpgradeError {
            return AttemptResult(error)
        } catch {
            return .interrupted
        }
    }

    /// The version image 0 runs, from an image list.
    static func runningVersion(_ slots: [ImageManagement.SlotState]) -> String? {
        slots.first { $0.imageNumber == 0 && $0.isActive }?.version ?? slots.first { $0.isActive }?.version
    }
}
