import Foundation

/// The canary, wave and budget gates, decided from the devices' records alone — the same
/// function whether the records live in one process (``RolloutStateMachine``) or in a database
/// shared by several hosts (read under the rollout's row lock), so two hosts never disagree.
public enum RolloutGates {
    /// What the records allow.
    public enum Verdict: Sendable, Hashable {
        /// No device may start: the canary failed or the budget ran out.
        case halted(HaltReason)
        /// The canary runs: up to this many more devices may start, alone.
        case canary(openings: Int)
        /// This wave (0-based) runs: its pending devices may start.
        case wave(Int)
        /// Every device has ended.
        case complete
    }

    /// Why a rollout stopped starting devices.
    public enum HaltReason: Sendable, Hashable, CustomStringConvertible {
        /// A canary device failed.
        case canaryFailed(device: String)
        /// More devices failed or were unreachable than the budget allows.
        case budgetExceeded(failures: Int, limit: Int)

        public var description: String {
            switch self {
            case .canaryFailed(let device): return "the canary \(device) failed"
            case .budgetExceeded(let failures, let limit):
                return "\(failures) devices failed or were unreachable; the budget allows \(limit)"
            }
        }
    }

    /// The gate the records are at.
    /// - Parameters:
    ///   - records: every device of the rollout.
    ///   - policy: the rollout's policy.
    public static func verdict(_ records: [DeviceRecord], policy: RolloutPolicy) -> Verdict {
        if let failed = records.first(where: { $0.phase == .canary && $0.status == .failed }) {
            return .halted(.canaryFailed(device: failed.id))
        }
        let failures = records.count { $0.status.isFailure }
        if let limit = policy.failureLimit(of: records.count), failures > limit {
            return .halted(.budgetExceeded(failures: failures, limit: limit))
        }
        let open = records.filter { !$0.status.isFinal }
        guard !open.isEmpty else { return .complete }
        let canaryUpgraded = records.count { $0.phase == .canary && $0.status == .upgraded }
        if canaryUpgraded < policy.canary {
            let canaryRunning = records.count { $0.phase == .canary && $0.status == .running }
            return .canary(openings: max(0, policy.canary - canaryUpgraded - canaryRunning))
        }
        let ends = policy.waveEnds(of: records.count)
        let first = open.map { wave(of: $0.position, ends: ends) }.min() ?? 0
        return .wave(first)
    }

    /// The wave (0-based) of an inventory position.
    /// - Parameters:
    ///   - position: the device's position.
    ///   - ends: ``RolloutPolicy/waveEnds(of:)``.
    public static func wave(of position: Int, ends: [Int]) -> Int {
        ends.firstIndex { position < $0 } ?? max(0, ends.count - 1)
    }

    /// The devices a worker may start now, in order, with the phase each starts in.
    /// - Parameters:
    ///   - records: every device of the rollout.
    ///   - policy: the rollout's policy.
    ///   - worker: the worker's name (devices tied to other hosts are not its to start).
    ///   - now: the time (retries wait out their back-off).
    /// - Returns: indexes into `records`, and phases.
    public static func starts(
        _ records: [DeviceRecord],
        policy: RolloutPolicy,
        worker: String,
        now: Date
    ) -> [(index: Int, phase: RolloutPhase)] {
        let verdict = verdict(records, policy: policy)
        var openings: Int
        let phase: RolloutPhase
        switch verdict {
        case .halted, .complete: return []
        case .canary(let count):
            openings = count
            phase = .canary
        case .wave(let index):
            openings = Int.max
            phase = .wave(index)
        }
        let mine = records.filter { $0.status == .running && $0.worker == worker }
        openings = min(openings, policy.parallel - mine.count)
        var held = resourceUse(mine)
        let ends = policy.waveEnds(of: records.count)
        var chosen: [(index: Int, phase: RolloutPhase)] = []
        for index in records.indices.sorted(by: { records[$0].position < records[$1].position }) {
            guard chosen.count < openings else { break }
            let record = records[index]
            let due = record.notBefore.map { $0 <= now } ?? true
            guard record.status == .pending, record.isReachable(from: worker), due else { continue }
            if case .wave(let current) = phase, wave(of: record.position, ends: ends) != current { continue }
            if let resource = resource(of: record) {
                guard held[resource, default: 0] < limit(of: resource, policy: policy) else { continue }
                held[resource, default: 0] += 1
            }
            chosen.append((index, phase))
        }
        return chosen
    }

    /// The earliest time a pending device this worker may start waits for, if any.
    public static func nextRetry(_ records: [DeviceRecord], worker: String, after now: Date) -> Date? {
        records.filter { $0.status == .pending && $0.isReachable(from: worker) }
            .compactMap(\.notBefore).filter { $0 > now }.min()
    }

    static func resource(of record: DeviceRecord) -> FleetResource? {
        (try? MCUmgrConnectURL.parse(record.url))?.fleetResource
    }

    static func limit(of resource: FleetResource, policy: RolloutPolicy) -> Int {
        switch resource {
        case .serialPort: return 1
        case .bleAdapter: return policy.bleConnectionsPerAdapter
        }
    }

    static func resourceUse(_ running: [DeviceRecord]) -> [FleetResource: Int] {
        var held: [FleetResource: Int] = [:]
        for record in running { if let resource = resource(of: record) { held[resource, default: 0] += 1 } }
        return held
    }
}
