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

    /// The JSON objects it wrote, one per line, since `events` last read: each line is parsed
    /// once, so that a test watching a long, chatty run does not reparse all of it every time
    /// (that held a core of a loaded machine from the niced processes it watched).
    /// - Parameter events: what was read so far; the new lines are appended.
    /// - Returns: the new objects (lines that are not JSON objects are skipped).
    @discardableResult
    public func readEvents(into events: inout JSONEvents) -> ArraySlice<[String: Any]> {
        let new = child.stdout(from: events.consumed)
        guard let end = new.lastIndex(of: UInt8(ascii: "\n")) else { return [] }
        let start = events.objects.count
        for line in new[new.startIndex..<end].split(separator: UInt8(ascii: "\n")) {
            if let object = try? JSONSerialization.jsonObject(with: Data(line)) as? [String: Any] {
                events.objects.append(object)
            }
        }
        events.consumed += end - new.startIndex + 1
        return events.objects[start...]
    }

    /// Whether it has exited: the event a test's wait for some output ends on when that output
    /// never comes.
    public var hasExited: Bool { child.hasExited }

    /// Waits until what it wrote satisfies `condition`, or `timeout` passes.
    /// - Returns: whether the condition came true.
    public func waitForOutput(
        timeout: Duration,
        _ condition: (_ stdout: String, _ stderr: String) -> Bool
    ) async throws -> Bool {
        try await RealIO.poll(timeout: timeout) { condition(output.stdout, output.stderr) ? true : nil } ?? false
    }

    /// Waits until what it wrote satisfies `condition`, or it exits — bounded by events only, for
    /// a process that may be starved for long (a niced fleet beside the whole suite); its own
    /// `timeout` is the guard against a hang.
    /// - Returns: whether the condition came true.
    public func waitForOutput(_ condition: (_ stdout: String, _ stderr: String) -> Bool) async throws -> Bool {
        while !hasExited {
            if condition(output.stdout, output.stderr) { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return condition(output.stdout, output.stderr)
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

/// The JSON lines a ``RunningProcess`` wrote, read incrementally (``RunningProcess/readEvents(into:)``).
public struct JSONEvents {
    /// Bytes of stdout read (whole lines only).
    var consumed = 0
    /// Every object read so far, in order.
    public internal(set) var objects: [[String: Any]] = []

    /// Nothing read yet.
    public init() {}
}
