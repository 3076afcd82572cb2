import Foundation
import SMPBytes

/// The tabs that follow one operation (an upgrade, a file transfer, a rollout): each gets the
/// latest snapshot at once, then every change, and its stream ends after the last one.
///
/// Progress arrives many times a second; a progress-only change goes out at most one per
/// interval, and the last one is never dropped (it goes out once the interval has passed). Other
/// changes go out at once. The operation's actor publishes every change in order; the broadcast
/// keeps the latest, so a delayed send carries whatever is newest by then.
final class SnapshotBroadcast<Snapshot: Sendable>: Sendable {
    private struct State {
        var latest: Snapshot
        var ended = false
        var subscribers: [UUID: AsyncStream<Snapshot>.Continuation] = [:]
        var throttle: LiveUpdateThrottle
    }

    private let state: Locked<State>
    private let clock = ContinuousClock()

    /// Creates a broadcast with no tab yet.
    /// - Parameters:
    ///   - initial: the snapshot a first tab gets.
    ///   - interval: the shortest time between two progress-only sends.
    init(_ initial: Snapshot, interval: Duration) {
        state = Locked(State(latest: initial, throttle: LiveUpdateThrottle(interval: interval)))
    }

    /// The latest snapshot at once, then every change; finishes after the last one.
    func subscribe() -> AsyncStream<Snapshot> {
        let (stream, continuation) = AsyncStream.makeStream(of: Snapshot.self)
        let id = UUID()
        let following: Bool = state.withLock { state in
            continuation.yield(state.latest)
            guard !state.ended else { return false }
            state.subscribers[id] = continuation
            return true
        }
        guard following else {
            continuation.finish()
            return stream
        }
        // Set outside the lock: a tab that has gone already runs it at once, and it locks.
        continuation.onTermination = { [weak self] _ in
            self?.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// How many tabs follow now.
    var subscriberCount: Int { state.withLock { $0.subscribers.count } }

    /// Sends a change to every tab: at once, or for a progress-only change, at once or when the
    /// interval since the last send has passed.
    /// - Parameters:
    ///   - snapshot: the snapshot with the change.
    ///   - progressOnly: only progress changed.
    func publish(_ snapshot: Snapshot, progressOnly: Bool = false) {
        let now = clock.now
        // Yielded under the lock, so that a delayed send never overtakes a newer snapshot
        // (a yield only queues; ending a stream, which runs its termination handler, is left
        // outside).
        let sendAt: ContinuousClock.Instant? = state.withLock { state in
            guard !state.ended else { return nil }
            state.latest = snapshot
            switch progressOnly ? state.throttle.progress(at: now) : .sendNow {
            case .sendNow:
                state.throttle.sent(at: now)
                for continuation in state.subscribers.values { continuation.yield(snapshot) }
                return nil
            case .sendAt(let instant):
                return instant
            case .alreadyScheduled:
                return nil
            }
        }
        guard let sendAt else { return }
        Task { [weak self] in
            try? await Task.sleep(until: sendAt, clock: ContinuousClock())
            self?.sendLatest()
        }
    }

    /// Sends the last snapshot and ends every tab's stream; later publishes are ignored.
    /// - Parameter snapshot: the operation's last snapshot.
    func finish(_ snapshot: Snapshot) {
        let subscribers: [AsyncStream<Snapshot>.Continuation] = state.withLock { state in
            guard !state.ended else { return [] }
            state.latest = snapshot
            state.ended = true
            for continuation in state.subscribers.values { continuation.yield(snapshot) }
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for continuation in subscribers { continuation.finish() }
    }

    /// The delayed send of a progress change: the newest snapshot by now, unless the end
    /// already carried it.
    private func sendLatest() {
        let now = clock.now
        state.withLock { state in
            guard !state.ended else { return }
            state.throttle.sent(at: now)
            for continuation in state.subscribers.values { continuation.yield(state.latest) }
        }
    }
}
