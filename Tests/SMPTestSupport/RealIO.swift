import Foundation

/// Waiting on real I/O (a socket, a pseudo-terminal, a process) by the wall clock: the one
/// place tests sleep, because there the operating system, not our code, decides when bytes
/// arrive. Everything else orders events with test clocks and continuations.
public enum RealIO {
    /// Tries a non-blocking (or briefly blocking) read until it yields or the time is up,
    /// pausing between tries so that no cooperative thread stays blocked.
    ///
    /// The timeout counts pauses, not time on the clock: a machine busy with other suites (or a
    /// sanitizer's slowdown) can stall a task for seconds, and such a stall costs one pause here,
    /// so an answer on its way is still taken. Each pause lasts at least its nominal length, so
    /// silence is never declared sooner than `timeout`. The pauses double from `pause` up to
    /// 50 ms: a wait of seconds is a few dozen wake-ups, not thousands (loops waking every
    /// millisecond, in many tests at once, kept the cooperative pool so busy beside stress-ng
    /// that other tests' timers fired seconds late).
    /// - Parameters:
    ///   - timeout: how long to keep trying, at the least.
    ///   - pause: the first pause between tries.
    ///   - attempt: one try; `nil` means "not yet".
    /// - Returns: the first value an attempt gave, or `nil` when the tries ran out.
    /// - Throws: what an attempt throws, or `CancellationError`.
    public static func poll<T>(
        timeout: Duration,
        every pause: Duration = .milliseconds(2),
        _ attempt: () throws -> T?
    ) async throws -> T? {
        let longest = max(pause, .milliseconds(50))
        var waited = Duration.zero
        var next = pause
        while waited < timeout {
            if let value = try attempt() { return value }
            try await Task.sleep(for: next)
            waited += next
            next = min(next * 2, longest)
        }
        return try attempt()
    }

    /// Makes a named pipe at `url` and writes `bytes` into it from a thread of its own once a
    /// reader opens it, as a shell's `<(…)` does; the caller removes the pipe.
    ///
    /// The writer opens without blocking and tries again every 10 ms for at most 5 s, so that a
    /// test failing before it reads cannot leave the thread blocked.
    /// - Parameters:
    ///   - bytes: what the pipe yields, then end of file.
    ///   - url: where to make it.
    /// - Throws: `POSIXError` when the pipe cannot be made.
    public static func servePipe(_ bytes: Data, at url: URL) throws {
        guard mkfifo(url.path, 0o600) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        let writer = Thread {
            for _ in 0..<500 {
                let descriptor = open(url.path, O_WRONLY | O_NONBLOCK)
                guard descriptor >= 0 else {
                    usleep(10_000)
                    continue
                }
                // Blocking from here on: the reader takes the bytes at its pace.
                _ = fcntl(descriptor, F_SETFL, 0)
                var offset = 0
                while offset < bytes.count {
                    let written = bytes.withUnsafeBytes { buffer in
                        buffer.baseAddress.map { write(descriptor, $0 + offset, buffer.count - offset) } ?? -1
                    }
                    guard written > 0 else { break }
                    offset += written
                }
                close(descriptor)
                return
            }
        }
        writer.start()
    }
}
