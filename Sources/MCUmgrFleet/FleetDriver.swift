import Foundation
import MCUboot
import MCUmgrDFU
import SMPLink

/// Performs a rollout's decisions, on one host or as one worker of many: asks its
/// ``RolloutCoordinator`` what starts, starts those upgrades (``FleetUpgradeLauncher``), feeds
/// back how each ended, renews leases and wakes for retries; decides nothing. One per run.
struct FleetDriver {
    /// What the driver's loop waits for.
    enum Message: Sendable {
        /// A device's upgrade attempt (its number) ended.
        case ended(String, attempt: Int, AttemptResult)
        /// A device's upgrade attempt read the version the device runs.
        case versionRead(String, attempt: Int, String)
        /// A retry's back-off is over, or it is time to look again.
        case wake
        /// The user interrupted.
        case interrupt
    }

    let fleet: FleetUpgrade
    let store: any RolloutStore
    let launcher: FleetUpgradeLauncher
    let events: AsyncThrowingStream<FleetEvent, any Error>.Continuation
    let inbox: AsyncStream<Message>.Continuation
    /// The upgrades running here, with the attempt each is (a device this worker lost and then
    /// claimed again has a new attempt; the old one's end is not the device's).
    private var runs: [String: (attempt: Int, run: FirmwareUpgradeRun)] = [:]
    private var interrupted = false

    init(
        fleet: FleetUpgrade,
        package: FirmwarePackage,
        rollout: RolloutDescription,
        devices: [Inventory.Device],
        store: any RolloutStore,
        events: AsyncThrowingStream<FleetEvent, any Error>.Continuation,
        inbox: AsyncStream<Message>.Continuation
    ) {
        self.fleet = fleet
        self.store = store
        self.events = events
        self.inbox = inbox
        launcher = FleetUpgradeLauncher(
            fleet: fleet,
            package: package,
            devices: Dictionary(devices.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a }),
            events: events,
            inbox: inbox,
            store: store,
            rollout: rollout.id
        )
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
            var coordinator = store.coordinator(rollout, records: records, fleet: fleet)
            try await withThrowingTaskGroup(of: Void.self) { group in
                if let poll = coordinator.pollInterval { startTicker(every: poll, group: &group) }
                var iterator = messages.makeAsyncIterator()
                do {
                    while try await !step(&coordinator, group: &group) {
                        guard let message = await iterator.next() else { break }
                        try await handle(message, &coordinator, group: &group)
                    }
                } catch {
                    // The group waits for its children before it rethrows, and they wait for the
                    // upgrades (with a shared store, for leases nobody can renew now): a store
                    // that failed stops the rollout now, not after every upgrade has ended
                    // unrecorded.
                    await stopRuns(&coordinator)
                    throw error
                }
                group.cancelAll()
            }
            events.finish()
        } catch {
            events.finish(throwing: error)
        }
    }

    /// Cancels every upgrade running here and gives up its lease, so that none goes on sending.
    private mutating func stopRuns(_ coordinator: inout any RolloutCoordinator) async {
        for (device, entry) in runs {
            entry.run.cancel()
            await coordinator.release(device)
        }
    }

    /// Wakes the loop every `interval` (a shared rollout: other workers' devices end, leases
    /// lapse, leases are renewed).
    private func startTicker(every interval: Duration, group: inout ThrowingTaskGroup<Void, any Error>) {
        let inbox = self.inbox
        let clock = fleet.clock
        group.addTask {
            while !Task.isCancelled {
                try? await clock.sleep(for: interval)
                inbox.yield(.wake)
            }
        }
    }

    /// Performs one step of the coordinator; returns whether the rollout is over for this run.
    private mutating func step(
        _ coordinator: inout any RolloutCoordinator,
        group: inout ThrowingTaskGroup<Void, any Error>
    ) async throws -> Bool {
        let step = try await coordinator.step(
            capacity: fleet.policy.parallel - runs.count,
            interrupted: interrupted,
            running: runs.count
        )
        for record in step.ended { events.yield(.ended(record)) }
        if let halt = step.halt { events.yield(.halted(halt)) }
        // Each phase is announced before the first device it starts.
        var phases = step.phases
        for record in step.started {
            if let index = phases.firstIndex(where: { $0 == record.phase }) {
                for phase in phases[...index] { events.yield(.phase(phase)) }
                phases.removeFirst(index + 1)
            }
            events.yield(.started(record))
            await start(record, &coordinator, group: &group)
        }
        for phase in phases { events.yield(.phase(phase)) }
        guard let outcome = step.outcome else { return false }
        events.yield(.finished(outcome))
        return true
    }

    private mutating func handle(
        _ message: Message,
        _ coordinator: inout any RolloutCoordinator,
        group: inout ThrowingTaskGroup<Void, any Error>
    ) async throws {
        switch message {
        case .ended(let device, let attempt, let result):
            if let entry = runs[device], entry.attempt == attempt {
                runs[device] = nil
                await coordinator.release(device)
            }
            if let (record, at) = try await coordinator.finish(device: device, attempt: attempt, result: result) {
                events.yield(.retrying(record, at: at))
                wake(at: at, group: &group)
            }
        case .versionRead(let device, let attempt, let version):
            try await coordinator.versionRead(device: device, attempt: attempt, version: version)
        case .wake:
            for device in try await coordinator.renew(running: Array(runs.keys)) {
                runs.removeValue(forKey: device)?.run.cancel()
            }
        case .interrupt:
            interrupted = true
            for (device, entry) in runs {
                entry.run.cancel()
                await coordinator.release(device)
            }
        }
    }

    /// Wakes the loop at a retry's time, by the rollout's clock.
    private func wake(at date: Date, group: inout ThrowingTaskGroup<Void, any Error>) {
        let inbox = self.inbox
        let clock = fleet.clock
        group.addTask {
            try? await clock.sleep(until: date)
            inbox.yield(.wake)
        }
    }

    private mutating func start(
        _ record: DeviceRecord,
        _ coordinator: inout any RolloutCoordinator,
        group: inout ThrowingTaskGroup<Void, any Error>
    ) async {
        // A run of an earlier attempt still here is stale (the device was claimed again): stop it.
        if let stale = runs.removeValue(forKey: record.id) {
            stale.run.cancel()
        }
        let lease = coordinator.lease(for: record.id)
        let wrap: (any SMPTransport) -> any SMPTransport = { transport in
            lease.map { LeasedTransport(inner: transport, lease: $0) } ?? transport
        }
        guard let run = launcher.start(record, wrap: wrap, group: &group) else { return }
        runs[record.id] = (record.attempts, run)
    }
}
