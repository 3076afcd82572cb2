import Foundation
import MCUboot
import MCUmgrDFU
import SMPLink

/// Runs this worker's part of a rollout shared through a ``SharedRolloutStore``: the store
/// decides what starts (claims under the rollout's lock); the driver starts those upgrades,
/// renews their leases, reports how each ended, and polls for more until every device of the
/// rollout has ended. Decides nothing itself.
struct SharedFleetDriver {
    let fleet: FleetUpgrade
    let package: FirmwarePackage
    let devices: [String: Inventory.Device]
    let store: any SharedRolloutStore
    let events: AsyncThrowingStream<FleetEvent, any Error>.Continuation
    let inbox: AsyncStream<FleetDriver.Message>.Continuation
    /// The upgrades running here, with the attempt each is (a device this worker lost and then
    /// claimed again has a new attempt; the old one's end is not the device's).
    private var runs: [String: (attempt: Int, run: FirmwareUpgradeRun, lease: DeviceLease)] = [:]
    private var interrupted = false
    private var announcedPhase: RolloutPhase?
    private var announcedHalt = false
    private var lastRenewal = ContinuousClock.now
    /// The devices this worker started in this run, and those that had ended before it: what the
    /// outcome says this run saw, and what it only shows.
    private var started: Set<String> = []
    private var endedBefore: Set<String> = []

    init(
        fleet: FleetUpgrade,
        package: FirmwarePackage,
        devices: [String: Inventory.Device],
        store: any SharedRolloutStore,
        events: AsyncThrowingStream<FleetEvent, any Error>.Continuation,
        inbox: AsyncStream<FleetDriver.Message>.Continuation
    ) {
        self.fleet = fleet
        self.package = package
        self.devices = devices
        self.store = store
        self.events = events
        self.inbox = inbox
    }

    mutating func run(
        _ rollout: RolloutDescription,
        devices list: [Inventory.Device],
        messages: AsyncStream<FleetDriver.Message>
    )
        async
    {
        do {
            let records = try await store.prepare(
                rollout,
                devices: list,
                retryFailed: fleet.retryFailed,
                events: events
            )
            endedBefore = Set(records.filter(\.status.isFinal).map(\.id))
            try await withThrowingTaskGroup(of: Void.self) { group in
                let inbox = self.inbox
                let poll = fleet.pollInterval
                // The ticker: claims again (other workers' devices end, leases expire, back-offs pass).
                group.addTask {
                    while !Task.isCancelled {
                        try? await Task.sleep(for: poll)
                        inbox.yield(.wake)
                    }
                }
                var iterator = messages.makeAsyncIterator()
                do {
                    while true {
                        if let outcome = try await step(rollout.id, group: &group) {
                            events.yield(.finished(outcome))
                            break
                        }
                        guard let message = await iterator.next() else { break }
                        try await handle(message, rollout: rollout.id)
                    }
                } catch {
                    // The group waits for its children before it rethrows, and they wait for the
                    // upgrades, which wait for leases nobody can renew now: stop them first.
                    await stopRuns()
                    throw error
                }
                group.cancelAll()
            }
            events.finish()
        } catch {
            await stopRuns()
            events.finish(throwing: error)
        }
    }

    /// Cancels every upgrade running here and revokes its lease, so that none goes on sending.
    private func stopRuns() async {
        for entry in runs.values {
            entry.run.cancel()
            await entry.lease.revoke()
        }
    }

    /// Claims what may start and starts it; returns the outcome once the rollout is over for this
    /// worker (every device ended, or interrupted with nothing left running here).
    private mutating func step(_ rollout: String, group: inout ThrowingTaskGroup<Void, any Error>) async throws
        -> RolloutOutcome?
    {
        if interrupted {
            guard runs.isEmpty else { return nil }
            let records = try await store.rollout(rollout)?.1 ?? []
            return RolloutOutcome(
                records: records,
                halt: nil,
                interrupted: true,
                started: started,
                endedBefore: endedBefore,
                worker: fleet.worker
            )
        }
        let asked = ContinuousClock.now
        let claim = try await store.claim(
            rollout,
            worker: fleet.worker,
            policy: fleet.policy,
            capacity: fleet.policy.parallel - runs.count,
            lease: fleet.lease
        )
        for record in claim.closed { events.yield(.ended(record)) }
        var halt: RolloutGates.HaltReason?
        if case .halted(let reason) = claim.verdict {
            halt = reason
            if !announcedHalt { events.yield(.halted(reason)) }
            announcedHalt = true
        }
        for record in claim.started {
            if let phase = record.phase, phase != announcedPhase {
                announcedPhase = phase
                events.yield(.phase(phase))
            }
            events.yield(.started(record))
            started.insert(record.id)
            await start(record, lease: DeviceLease(asked: asked, lease: fleet.lease), group: &group)
        }
        guard claim.isComplete, runs.isEmpty else { return nil }
        return RolloutOutcome(
            records: claim.records,
            halt: halt,
            interrupted: false,
            started: started,
            endedBefore: endedBefore,
            worker: fleet.worker
        )
    }

    private mutating func handle(_ message: FleetDriver.Message, rollout: String) async throws {
        switch message {
        case .ended(let device, let attempt, let result):
            if let entry = runs[device], entry.attempt == attempt {
                runs[device] = nil
                await entry.lease.revoke()
            }
            let ended = try await store.finish(
                rollout,
                device: device,
                attempt: attempt,
                worker: fleet.worker,
                result: result,
                policy: fleet.policy
            )
            guard let (record, retryAt) = ended else { return }  // the lease was lost: not ours
            if let retryAt { events.yield(.retrying(record, at: retryAt)) }
            if record.status.isFinal { events.yield(.ended(record)) }
        case .versionRead(let device, let attempt, let version):
            try await store.versionRead(
                rollout,
                device: device,
                attempt: attempt,
                worker: fleet.worker,
                version: version
            )
        case .wake:
            try await renewIfDue(rollout)
        case .interrupt:
            interrupted = true
            for entry in runs.values {
                entry.run.cancel()
                await entry.lease.revoke()
            }
        }
    }

    /// Renews the leases of the devices running here, a third of a lease after the last renewal;
    /// an upgrade whose device another worker took (this worker stalled past its lease) is
    /// cancelled. Between the end of a lease and the renewal that finds it lost, the upgrade
    /// sends nothing (``DeviceLease``), so two workers never upgrade one device at once.
    private mutating func renewIfDue(_ rollout: String) async throws {
        guard ContinuousClock.now - lastRenewal >= fleet.lease / 3, !runs.isEmpty else { return }
        let asked = ContinuousClock.now
        lastRenewal = asked
        let mine = try await store.renew(rollout, worker: fleet.worker, devices: Array(runs.keys), lease: fleet.lease)
        for (device, entry) in runs {
            guard mine.contains(device) else {
                await entry.lease.revoke()
                entry.run.cancel()
                runs[device] = nil
                continue
            }
            await entry.lease.renewed(asked: asked, lease: fleet.lease)
        }
    }

    private mutating func start(
        _ record: DeviceRecord,
        lease: DeviceLease,
        group: inout ThrowingTaskGroup<Void, any Error>
    ) async {
        let id = record.id
        let inbox = self.inbox
        guard let device = devices[id] else {
            let failure = AttemptFailure(code: .notInInventory, state: nil, message: "not in this worker's inventory")
            inbox.yield(.ended(id, attempt: record.attempts, .failed(failure)))
            return
        }
        let transport: any SMPTransport
        do {
            transport = LeasedTransport(inner: try fleet.makeTransport(device), lease: lease)
        } catch {
            let failure = AttemptFailure(code: .transportUnavailable, state: nil, message: "\(error)")
            inbox.yield(.ended(id, attempt: record.attempts, .failed(failure)))
            return
        }
        let run = FirmwareUpgrade(
            transport: transport,
            configuration: fleet.configuration,
            clientConfiguration: fleet.clientConfiguration,
            logger: fleet.logger
        ).run(package)
        // A run of an earlier attempt still here is stale (the device was claimed again): stop it.
        if let stale = runs[id] {
            stale.run.cancel()
            await stale.lease.revoke()
        }
        runs[id] = (record.attempts, run, lease)
        let events = self.events
        let attempt = record.attempts
        group.addTask {
            let result = await FleetDriver.outcome(of: run, device: id, attempt: attempt, events: events, inbox: inbox)
            inbox.yield(.ended(id, attempt: attempt, result))
        }
    }
}
