import SMPBytes

/// A clock that runs only while the simulated device is quiet: no request waits in its queue or
/// is being handled, and no answer it sent waits to be read.
///
/// Give it to the code under test (an `SMPClient`'s timeouts, a firmware upgrade's waits) and to
/// the device (``SimulatedDevice/Configuration/quietClock``), and connect over a
/// ``LoopbackTransport``: a timeout then fires only for an answer that will never come — lost,
/// or never sent because the device reset or lost power — and never for one that a busy machine
/// delayed, because the clock stands still for as long as the device or the link holds an
/// answer. Tests with injected faults then tell the same story on a loaded machine as on an idle
/// one, while an answer that is really lost still costs only the timeout's length of real time.
///
/// While the device is quiet the clock runs at the pace of real time. It runs regardless once it
/// has stood still for ``holdLimit``: a device that keeps work in hand for that long is
/// wedged, and the timeouts of the code under test are then what ends the wait.
public final class QuietClock: Clock, Sendable {
    /// A point on the clock: the quiet time since the clock was made.
    public struct Instant: InstantProtocol, Sendable {
        /// The quiet time since the clock was made.
        public var offset: Duration

        /// A point on the clock.
        /// - Parameter offset: the quiet time since the clock was made.
        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct State {
        /// Work in hand: queued or handled requests, answers on the link or unread.
        var holds = 0
        /// Quiet time up to `since`.
        var banked: Duration = .zero
        /// When the clock last started or stopped.
        var since: ContinuousClock.Instant
    }

    /// How long the clock stands still at most before it runs anyway.
    public let holdLimit: Duration
    private let base = ContinuousClock()
    private let state: Locked<State>

    /// A clock that starts quiet, at zero.
    /// - Parameter holdLimit: how long work in hand may stop the clock before it runs anyway.
    public init(holdLimit: Duration = .seconds(30)) {
        self.holdLimit = holdLimit
        state = Locked(State(since: base.now))
    }

    public var now: Instant {
        let real = base.now
        return state.withLock { Instant(offset: Self.offset($0, at: real, holdLimit: holdLimit)) }
    }

    public var minimumResolution: Duration { .milliseconds(1) }

    /// Sleeps until the clock reaches `deadline`: in real sleeps of what is left, again after
    /// each, since the clock may have stood still meanwhile.
    /// - Throws: `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        while true {
            let left = now.duration(to: deadline)
            if left <= .zero { return }
            try await Task.sleep(for: left)
        }
    }

    /// The device (or its link) took work in hand: the clock stops until it is quiet again.
    func hold() {
        let real = base.now
        state.withLock {
            if $0.holds == 0 {
                $0.banked = Self.offset($0, at: real, holdLimit: holdLimit)
                $0.since = real
            }
            $0.holds += 1
        }
    }

    /// The work taken in hand by one ``hold()`` is done: answered, lost or dropped.
    func release() {
        let real = base.now
        state.withLock {
            guard $0.holds > 0 else { return }
            if $0.holds == 1 {
                $0.banked = Self.offset($0, at: real, holdLimit: holdLimit)
                $0.since = real
            }
            $0.holds -= 1
        }
    }

    private static func offset(_ state: State, at real: ContinuousClock.Instant, holdLimit: Duration) -> Duration {
        let span = state.since.duration(to: real)
        guard state.holds > 0 else { return state.banked + span }
        return state.banked + max(.zero, span - holdLimit)
    }
}
