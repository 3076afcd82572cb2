/// Waiting on real I/O (a socket, a pseudo-terminal, a process) by the wall clock: the one
/// place tests sleep, because there the operating system, not our code, decides when bytes
/// arrive. Everything else orders events with test clocks and continuations.
public enum RealIO {
    /// Tries a non-blocking (or briefly blocking) read until it yields or the time is up,
    /// pausing between tries so that no cooperative thread stays blocked.
    /// - Parameters:
    ///   - timeout: how long to keep trying.
    ///   - pause: the pause between tries.
    ///   - attempt: one try; `nil` means "not yet".
    /// - Returns: the first value an attempt gave, or `nil` when the time ran out.
    /// - Throws: what an attempt throws, or `CancellationError`.
    public static func poll<T>(
        timeout: Duration,
        every pause: Duration = .milliseconds(2),
        _ attempt: () throws -> T?
    ) async throws -> T? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let value = try attempt() { return value }
            guard ContinuousClock.now < deadline else { return nil }
            try await Task.sleep(for: pause)
        }
    }
}
