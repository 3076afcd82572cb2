import Foundation

/// Every decision of a rollout on one host, as a value: feed it what happened (``Input``) and the
/// time, it answers what to do (``Action``s). No I/O, no clock, no waiting of its own: the driver
/// starts the upgrades it names, reports how each ended, and wakes it for retries; table tests
/// drive it directly.
///
/// Policies it holds (``RolloutPolicy``):
/// - devices already running the image end ``DeviceRecord/Status/alreadyCurrent`` (the engine
///   reads the image list first and uploads nothing); in the canary they do not count, and the
///   next device takes their place;
/// - a canary of N devices goes first, alone; any canary failure halts the rollout (a canary
///   that never answered is replaced: nothing was written to it, and it counts against the budget);
/// - waves start in order, each only when every device of the waves before it has ended, within
///   the budget;
/// - one failure more than the budget allows halts: nothing new starts, upgrades in flight finish
///   (nothing is cancelled mid-swap), devices never started end ``DeviceRecord/Status/skipped``;
/// - an attempt that failed on the link is started again after a back-off, up to
///   ``RolloutPolicy/linkRetries`` times; a refusal or a failed verification never is;
/// - an interruption starts nothing new; the upgrades in flight end as the driver cancels them,
///   and their devices stay pending, to be planned again from their own image list next time.
public struct RolloutStateMachine: Sendable {
    /// Where the rollout is, each state with its own data.
    public enum State: Sendable, Hashable {
        /// Not started.
        case idle
        /// Starting devices as the gates allow; the phase last announced.
        case rolling(RolloutPhase?)
        /// Halted: no new starts; the upgrades in flight finish.
        case halted(RolloutGates.HaltReason)
        /// Interrupted: no new starts; the upgrades in flight are being cancelled.
        case interrupted
        /// Ended.
        case finished(RolloutOutcome)
    }

    /// What happened.
    public enum Input: Sendable, Hashable {
        /// Begin (or resume) the rollout.
        case start
        /// An upgrade attempt of a device ended.
        case ended(device: String, AttemptResult)
        /// A running device answered with the version it runs, before its upgrade changed it.
        case versionRead(device: String, String)
        /// A retry's back-off may have passed: look again.
        case wake
        /// The user interrupted (Ctrl-C).
        case interrupt
    }

    /// What the driver does.
    public enum Action: Sendable, Hashable {
        /// A phase begins (the canary, a wave).
        case enterPhase(RolloutPhase)
        /// Start an upgrade of the device (its `attempt`-th, 1-based) and report how it ends.
        case start(device: String, attempt: Int, phase: RolloutPhase)
        /// The device failed on the link and starts again at this time; send ``Input/wake`` then.
        case retry(device: String, at: Date, AttemptFailure)
        /// No device starts from now on.
        case halt(RolloutGates.HaltReason)
        /// The rollout is over.
        case finish(RolloutOutcome)
    }

    /// The policy in force.
    public let policy: RolloutPolicy
    /// This host's name: devices tied to other hosts (their `host` label) are not started here.
    public let worker: String
    /// Every device, in inventory order.
    public private(set) var records: [DeviceRecord]
    /// Where the rollout is.
    public private(set) var state: State = .idle
    private var indexByID: [String: Int] = [:]
    /// The devices this machine started (what the outcome says this run saw).
    private var started: Set<String> = []
    /// The devices that had ended before this run (what the outcome only shows).
    private let endedBefore: Set<String>

    /// Creates a machine from the devices' records: new ones pending, or those of an earlier run
    /// (a device caught running by a crash is pending again, to be planned from its own list).
    /// - Parameters:
    ///   - records: every device, in inventory order.
    ///   - policy: the policy.
    ///   - worker: this host's name.
    public init(records: [DeviceRecord], policy: RolloutPolicy, worker: String) {
        self.policy = policy
        self.worker = worker
        self.records = records.map { record in
            var record = record
            if record.status == .running { record.status = .pending }
            return record
        }
        for (index, record) in self.records.enumerated() { indexByID[record.id] = index }
        endedBefore = Set(records.filter(\.status.isFinal).map(\.id))
    }

    /// The record of a device.
    public func record(_ id: String) -> DeviceRecord? { indexByID[id].map { records[$0] } }

    /// Feeds an input; returns what to do, in order.
    /// - Parameters:
    ///   - input: what happened.
    ///   - now: the time.
    public mutating func handle(_ input: Input, at now: Date) -> [Action] {
        switch (state, input) {
        case (.finished, _):
            return []
        case (.idle, .start):
            skipDevicesOfOtherHosts(at: now)
            state = .rolling(nil)
            return advance(at: now)
        case (.idle, _):
            return []
        case (_, .start):
            return []
        case (_, .ended(let device, let result)):
            return ended(device, result, at: now)
        case (_, .versionRead(let device, let version)):
            if let index = indexByID[device], records[index].status == .running {
                records[index] = RolloutTransitions.versionRead(records[index], version)
            }
            return []
        case (_, .wake):
            return advance(at: now)
        case (_, .interrupt):
            if case .rolling = state { state = .interrupted }
            if case .halted = state { state = .interrupted }
            return finishIfIdle(at: now)
        }
    }

    private mutating func ended(_ id: String, _ result: AttemptResult, at now: Date) -> [Action] {
        guard let index = indexByID[id], records[index].status == .running else { return [] }
        var rolling = false
        if case .rolling = state { rolling = true }
        let (record, retryAt) = RolloutTransitions.end(
            records[index],
            result,
            policy: policy,
            rolling: rolling,
            at: now
        )
        records[index] = record
        var actions: [Action] = []
        if let retryAt, let failure = record.failure { actions.append(.retry(device: id, at: retryAt, failure)) }
        return actions + advance(at: now)
    }

    /// Starts what the gates allow, or halts, or finishes.
    private mutating func advance(at now: Date) -> [Action] {
        guard case .rolling = state else { return finishIfIdle(at: now) }
        let verdict = RolloutGates.verdict(records, policy: policy)
        if case .halted(let reason) = verdict {
            state = .halted(reason)
            return [.halt(reason)] + finishIfIdle(at: now)
        }
        var actions: [Action] = []
        let starts = RolloutGates.starts(records, policy: policy, worker: worker, now: now)
        for (index, phase) in starts {
            if case .rolling(let current) = state, current != phase {
                state = .rolling(phase)
                actions.append(.enterPhase(phase))
            }
            records[index] = RolloutTransitions.start(records[index], phase: phase, worker: worker, at: now)
            started.insert(records[index].id)
            actions.append(.start(device: records[index].id, attempt: records[index].attempts, phase: phase))
        }
        return actions + finishIfIdle(at: now)
    }

    /// Ends the rollout once nothing runs and nothing more can start.
    private mutating func finishIfIdle(at now: Date) -> [Action] {
        guard !records.contains(where: { $0.status == .running }) else { return [] }
        switch state {
        case .rolling:
            let waiting = records.contains { $0.status == .pending }
            guard !waiting || RolloutGates.nextRetry(records, worker: worker, after: now) == nil else { return [] }
            if waiting { endPending(at: now, reason: nil) }
        case .halted(let reason):
            endPending(at: now, reason: reason)
        case .interrupted, .idle, .finished:
            break
        }
        let outcome = RolloutOutcome(
            records: records,
            halt: haltReason,
            interrupted: state == .interrupted,
            started: started,
            endedBefore: endedBefore
        )
        state = .finished(outcome)
        return [.finish(outcome)]
    }

    private var haltReason: RolloutGates.HaltReason? {
        if case .halted(let reason) = state { return reason }
        return nil
    }

    /// Devices that will not start: those attempted end with their last failure, the others
    /// are skipped.
    private mutating func endPending(at now: Date, reason: RolloutGates.HaltReason?) {
        for index in records.indices {
            records[index] = RolloutTransitions.close(records[index], reason: reason, at: now)
        }
    }

    private mutating func skipDevicesOfOtherHosts(at now: Date) {
        for index in records.indices where !records[index].isReachable(from: worker) && !records[index].status.isFinal {
            records[index].status = .skipped
            records[index].endedAt = now
            let hosts = records[index].hosts?.joined(separator: ",") ?? ""
            records[index].failure = AttemptFailure(
                code: .skipped,
                state: nil,
                message: "tied to host \(hosts); this worker is \(worker)"
            )
        }
    }
}

/// How a rollout ended: every device's record, and why it stopped early, if it did.
public struct RolloutOutcome: Sendable, Hashable {
    /// Every device, in inventory order.
    public var records: [DeviceRecord]
    /// Why it halted, if it did.
    public var halt: RolloutGates.HaltReason?
    /// Whether it was interrupted (devices not ended are left pending, to resume).
    public var interrupted: Bool
    /// The devices this run started an upgrade of (which connects to the device and reads its
    /// image list before anything else).
    public var started: Set<String>
    /// The devices whose record had ended when this run began: shown from the state, not
    /// contacted by this run.
    public var endedBefore: Set<String>
    /// With a shared store, this worker's name: a device another worker ran is
    /// ``Source/anotherWorker``. `nil` on one host.
    public var worker: String?

    /// Where an outcome's record of a device comes from: what this run saw, and what it only
    /// shows. A record reported as upgraded that this run did not see says so.
    public enum Source: String, Sendable, Hashable, CaseIterable {
        /// This run started an upgrade of the device: what the record says, this run saw.
        case thisRun = "this_run"
        /// The device had ended (at the same URL) before this run began — on one host, or under
        /// this worker's name — and this run did not contact it.
        case earlierRun = "earlier_run"
        /// Another worker sharing the rollout ran the device last: during this run, or before it
        /// began (the record's worker and time say who and when).
        case anotherWorker = "another_worker"
        /// Nobody contacted the device in this run: a halt or an interruption came first, or it
        /// is tied to another host.
        case notContacted = "not_contacted"
    }

    /// Creates an outcome.
    /// - Parameters:
    ///   - records: every device, in inventory order.
    ///   - halt: why it halted, if it did.
    ///   - interrupted: whether it was interrupted.
    ///   - started: the devices this run started an upgrade of.
    ///   - endedBefore: the devices that had ended before this run began.
    ///   - worker: with a shared store, this worker's name.
    public init(
        records: [DeviceRecord],
        halt: RolloutGates.HaltReason?,
        interrupted: Bool,
        started: Set<String> = [],
        endedBefore: Set<String> = [],
        worker: String? = nil
    ) {
        self.records = records
        self.halt = halt
        self.interrupted = interrupted
        self.started = started
        self.endedBefore = endedBefore
        self.worker = worker
    }

    /// Where the record of a device comes from.
    /// - Parameter record: one of ``records``.
    public func source(of record: DeviceRecord) -> Source {
        // With a shared store the last attempt may be another worker's, this run's start of the
        // device included (it lost its lease and another worker took the device over) — and
        // whenever it ended: a worker that joins a rollout late names the worker that ended a
        // device before it began, rather than calling a sibling's work an earlier run.
        if let worker, let recorded = record.worker, recorded != worker, record.status != .skipped,
            record.attempts > 0
        {
            return .anotherWorker
        }
        if endedBefore.contains(record.id) { return .earlierRun }
        return started.contains(record.id) ? .thisRun : .notContacted
    }

    /// Devices per source.
    public var sources: [Source: Int] {
        var counts: [Source: Int] = [:]
        for record in records { counts[source(of: record), default: 0] += 1 }
        return counts
    }

    /// Devices per status.
    public var counts: [DeviceRecord.Status: Int] {
        DeviceRecord.Status.counts(of: records)
    }

    /// Whether every device runs the image (upgraded or already current).
    public var isSuccess: Bool {
        !interrupted && halt == nil && records.allSatisfy { $0.status == .upgraded || $0.status == .alreadyCurrent }
    }
}
