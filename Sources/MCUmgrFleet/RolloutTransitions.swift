import Foundation

/// What happens to one device's record at each step of a rollout — started, an attempt ended,
/// left over when the rollout stops — as pure functions of the record, shared by
/// ``RolloutStateMachine`` (one host) and the PostgreSQL store (several hosts, inside a
/// transaction), so both write the same records.
public enum RolloutTransitions {
    /// The record of a device that starts an attempt.
    /// - Parameters:
    ///   - record: the pending record.
    ///   - phase: the phase it starts in.
    ///   - worker: the worker that runs it.
    ///   - now: the time.
    public static func start(_ record: DeviceRecord, phase: RolloutPhase, worker: String, at now: Date) -> DeviceRecord
    {
        var record = record
        record.status = .running
        record.phase = phase
        record.attempts += 1
        record.startedAt = now
        record.firstStartedAt = record.firstStartedAt ?? now
        record.notBefore = nil
        record.worker = worker
        return record
    }

    /// The record once a running device said what it runs: the version before the rollout, kept
    /// from the first attempt that read it (a resumed attempt may find the new image already
    /// running).
    /// - Parameters:
    ///   - record: the running record.
    ///   - version: the version the device runs.
    public static func versionRead(_ record: DeviceRecord, _ version: String) -> DeviceRecord {
        var record = record
        record.versionBefore = record.versionBefore ?? version
        return record
    }

    /// The record after an attempt ended, and when to start it again for a retry.
    /// - Parameters:
    ///   - record: the running record.
    ///   - result: how the attempt ended.
    ///   - policy: the rollout's policy (retries, back-off).
    ///   - rolling: whether the rollout still starts devices (not halted, not interrupted): only
    ///     then is a retry scheduled.
    ///   - now: the time.
    public static func end(
        _ record: DeviceRecord,
        _ result: AttemptResult,
        policy: RolloutPolicy,
        rolling: Bool,
        at now: Date
    ) -> (record: DeviceRecord, retryAt: Date?) {
        var record = record
        record.endedAt = now
        switch result {
        case .upgraded(let before, let after, let bytes):
            record.status = .upgraded
            // The first attempt's reading wins: a resumed attempt may start from a half-done one.
            record.versionBefore = record.versionBefore ?? before
            record.versionAfter = after
            record.uploadedBytes += bytes
            record.failure = nil
        case .alreadyCurrent(let version):
            record.versionAfter = version
            if finishedEarlierAttempt(record) {
                // An attempt this rollout began (cut by a crash or an interruption) got there.
                record.status = .upgraded
            } else {
                record.status = .alreadyCurrent
                record.versionBefore = version
                // In the canary it proves nothing about the image: the next device takes its place.
                if record.phase == .canary { record.phase = nil }
            }
            record.failure = nil
        case .failed(let failure):
            record.status = .failed
            record.failure = failure
        case .linkFailed(let failure, let reached):
            return linkFailed(record, failure, reached: reached, policy: policy, rolling: rolling, at: now)
        case .interrupted:
            record.status = .pending
            record.endedAt = nil
        }
        return (record, nil)
    }

    /// Whether an earlier attempt of this rollout may have installed the image: it reached the
    /// device and was cut short (a crash leaves no failure; a link failure after an answer).
    static func finishedEarlierAttempt(_ record: DeviceRecord) -> Bool {
        guard record.attempts > 1 else { return false }
        return record.failure.map(\.deviceAnswered) ?? true
    }

    private static func linkFailed(
        _ record: DeviceRecord,
        _ failure: AttemptFailure,
        reached: Bool,
        policy: RolloutPolicy,
        rolling: Bool,
        at now: Date
    ) -> (record: DeviceRecord, retryAt: Date?) {
        var record = record
        record.linkFailures += 1
        record.failure = failure
        // An unreached canary wrote nothing: it proves nothing, and the next device replaces it.
        if !reached, record.phase == .canary { record.phase = nil }
        guard record.linkFailures <= policy.linkRetries else {
            record.status = reached ? .failed : .unreachable
            return (record, nil)
        }
        // Pending again; a halt ends it with this failure, an interruption leaves it for next time.
        record.status = .pending
        record.endedAt = nil
        guard rolling else { return (record, nil) }
        let at = now.addingTimeInterval(seconds(policy.backoff(afterFailures: record.linkFailures)))
        record.notBefore = at
        return (record, at)
    }

    /// A device that will not start any more (the rollout halted, or nothing can start it): one
    /// attempted ends with its last failure, the others are skipped.
    /// - Parameters:
    ///   - record: a pending record.
    ///   - reason: why the rollout halted, if it did.
    ///   - now: the time.
    public static func close(_ record: DeviceRecord, reason: RolloutGates.HaltReason?, at now: Date) -> DeviceRecord {
        var record = record
        guard record.status == .pending else { return record }
        if let failure = record.failure, record.linkFailures > 0 {
            record.status = failure.deviceAnswered ? .failed : .unreachable
        } else {
            record.status = .skipped
            let why = reason.map { "the rollout halted: \($0)" } ?? "never startable"
            record.failure = AttemptFailure(code: .skipped, state: nil, message: why)
        }
        record.notBefore = nil
        record.endedAt = now
        return record
    }

    package static func seconds(_ duration: Duration) -> TimeInterval {
        let parts = duration.components
        return TimeInterval(parts.seconds) + TimeInterval(parts.attoseconds) / 1e18
    }
}
