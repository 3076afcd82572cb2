import Foundation
import SMPLink

/// The clock a rollout reads the time from and waits on: back-offs, leases and their renewals,
/// a shared rollout's polling. Injected, so that tests run those on a clock they advance by hand.
public struct FleetClock: Sendable {
    private let clock: SMPClock
    private let origin: Date

    /// Wraps a clock.
    /// - Parameters:
    ///   - clock: the clock to measure and wait on.
    ///   - origin: the wall time at which the clock's time is zero (recorded times are dates).
    public init<C: Clock<Duration>>(_ clock: C, origin: Date) {
        self.clock = SMPClock(clock)
        self.origin = origin
    }

    /// Real time: the continuous clock, from the current date.
    public static var system: FleetClock { FleetClock(ContinuousClock(), origin: Date()) }

    /// The time since the clock was made (for leases, which are measured, not dated).
    public var elapsed: Duration { clock.elapsed() }

    /// The current date by this clock.
    public var now: Date { origin.addingTimeInterval(RolloutTransitions.seconds(elapsed)) }

    /// Sleeps for a while.
    /// - Parameter duration: how long.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func sleep(for duration: Duration) async throws {
        try await clock.sleep(duration)
    }

    /// Sleeps until a date by this clock (at once if it has passed).
    /// - Parameter date: when to wake.
    /// - Throws: `CancellationError` when the task is cancelled.
    public func sleep(until date: Date) async throws {
        let seconds = max(0, date.timeIntervalSince(now))
        try await clock.sleep(.nanoseconds(Int64(seconds * 1e9)))
    }
}
