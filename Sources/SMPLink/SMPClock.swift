/// A clock as two functions, so any `Clock<Duration>` — the continuous clock, or a test clock
/// that a test advances by hand — drives the code that measures time or waits, without making
/// every type generic over the clock.
public struct SMPClock: Sendable {
    /// Time since the clock was made.
    public let elapsed: @Sendable () -> Duration
    /// Sleeps on the clock.
    public let sleep: @Sendable (Duration) async throws -> Void

    /// Wraps a clock.
    /// - Parameter clock: the clock to measure and sleep on.
    public init<C: Clock<Duration>>(_ clock: C) {
        let start = clock.now
        elapsed = { start.duration(to: clock.now) }
        sleep = { try await clock.sleep(for: $0) }
    }

    /// The continuous clock: real time, advancing while the system sleeps.
    public static var continuous: SMPClock { SMPClock(ContinuousClock()) }
}
