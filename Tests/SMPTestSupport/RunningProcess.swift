import Foundation

/// A child process a test watches while it runs: its output so far, signals sent to it, and its
/// end — for end-to-end tests of the package's own executables (Ctrl-C during a transfer, a
/// server stopped by a signal).
///
/// Started, drained and bounded like a peer (see ``Peers``): dedicated threads, an unblocked
/// signal mask, SIGTERM then SIGKILL after `timeout`. It takes no peer slot, since a test may
/// need two at once (a server and its client).
public final class RunningProcess: Sendable {
    private let child: ChildProcess
    private let outcome: Task<(status: Int32, stdout: Data, stderr: Data), any Error>

    /// Starts a process.
    /// - Parameters:
    ///   - executable: the absolute path of the program.
    ///   - arguments: its arguments.
    ///   - timeout: how long it may run before it is terminated, then killed (``finished()``
    ///     then throws).
    public init(_ executable: String, _ arguments: [String], timeout: Duration) {
        let child = ChildProcess(executable: executable, arguments: arguments, stdin: nil, timeout: timeout)
        self.child = child
        outcome = Task {
            let output = try await withCheckedThrowingContinuation { continuation in
                child.start { continuation.resume(with: $0) }
            }
            return (output.status, output.stdout, output.stderr)
        }
    }

    /// What it wrote so far, as text.
    public var output: (stdout: String, stderr: String) {
        let (stdout, stderr) = child.outputSoFar
        return (String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    /// Waits until what it wrote satisfies `condition`, or `timeout` passes.
    /// - Returns: whether the condition came true.
    public func waitForOutput(
        timeout: Duration,
        _ condition: (_ stdout: String, _ stderr: String) -> Bool
    ) async throws -> Bool {
        try await RealIO.poll(timeout: timeout) { condition(output.stdout, output.stderr) ? true : nil } ?? false
    }

    /// Sends a signal while it runs (nothing before it started or once it ended).
    /// - Parameter signal: the signal, e.g. `SIGINT`.
    public func send(_ signal: Int32) { child.send(signal) }

    /// Waits for it to end.
    /// - Returns: its exit status (or the signal that ended it) and everything it wrote.
    /// - Throws: ``PeerError`` when it ran past its timeout and was killed; `CancellationError`
    ///   after ``stop()``.
    public func finished() async throws -> (status: Int32, stdout: String, stderr: String) {
        let result = try await outcome.value
        return (
            result.status, String(decoding: result.stdout, as: UTF8.self),
            String(decoding: result.stderr, as: UTF8.self)
        )
    }

    /// Ends it now (SIGTERM, then SIGKILL), for a test that is done with it or gives up on it.
    public func stop() { child.cancel() }
}
