import Foundation

/// A clock that moves only when a test advances it: code that measures time or waits on a clock
/// is tested without sleeping, and the order of events is the test's, not the scheduler's.
public final class ManualClock: Clock, @unchecked Sendable {
    /// A point on the manual clock: the time advanced since it was made.
    public struct Instant: InstantProtocol, Sendable {
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var id: UInt64
        var continuation: CheckedContinuation<Void, any Error>
    }

    // Guarded by `lock`.
    private let lock = NSLock()
    private var current = Instant(offset: .zero)
    private var sleepers: [Sleeper] = []
    private var nextID: UInt64 = 0

    public init() {}

    public var now: Instant { lock.withLock { current } }
    public var minimumResolution: Duration { .zero }

    /// Suspends until a test advances the clock to `deadline`; throws `CancellationError` when the
    /// task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id: UInt64 = lock.withLock {
            nextID += 1
            return nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let due: Bool = lock.withLock {
                    if deadline <= current || Task.isCancelled { return true }
                    sleepers.append(Sleeper(deadline: deadline, id: id, continuation: continuation))
                    return false
                }
                if due { continuation.resume() }
            }
            try Task.checkCancellation()
        } onCancel: {
            let cancelled: CheckedContinuation<Void, any Error>? = lock.withLock {
                guard let index = sleepers.firstIndex(where: { $0.id == id }) else { return nil }
                return sleepers.remove(at: index).continuation
            }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// Moves the clock forward and wakes every sleeper whose deadline has come, in deadline order.
    /// - Parameter duration: how far to move.
    public func advance(by duration: Duration) {
        let woken: [CheckedContinuation<Void, any Error>] = lock.withLock {
            current = current.advanced(by: duration)
            let due = sleepers.filter { $0.deadline <= current }.sorted { $0.deadline < $1.deadline }
            sleepers.removeAll { $0.deadline <= current }
            return due.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// How many tasks sleep on the clock now: lets a test advance only once a sleeper is waiting.
    public var sleeperCount: Int { lock.withLock { sleepers.count } }
}
