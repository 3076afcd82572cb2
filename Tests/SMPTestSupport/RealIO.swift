/// Waiting on real I/O (a socket, a pseudo-terminal, a process) by the wall clock: the one
/// place tests sleep, because there the operating system, not our code, decides when bytes
/// arrive. Everything else orders events with test clocks and continuations.
public enum RealIO {
    /// Tries a non-blocking (or briefly blocking) read until it yields or the time is up,
    /// pausing between tries so that no cooperative thread stays blocked.
    ///
    /// The timeout counts pauses, not time on the clock: a machine busy with other suites (or a
    /// sanitizer's slowdown) can stall a task for seconds, and such a stall costs one pause here,
    /// so an answer on its way is still taken. Each pause lasts at least `pause`, so silence is
    /// never declared sooner than `timeout`.
    /// - Parameters:
    ///   - timeout: how long to keep trying, at the least.
    ///   - pause: the pause between tries.
    ///   - attempt: one try; `nil` means "not yet".
    /// - Returns: the first value an attempt gave, or `nil` when the tries ran out.
    /// - Throws: what an attempt throws, or `CancellationError`.
    public static func poll<T>(
        timeout: Duration,
        every pause: Duration = .milliseconds(2),
        _ attempt: () throws -> T?
    ) async throws -> T? {
        let pauses = max(1, Int((timeout / pause).rounded(.up)))
        for _ in 0..<pauses {
            if let value = try attempt() { return value }
            try await Task.sleep(for: pause)
        }
        return try attempt()
    }
}
