import Foundation
import SMPBytes

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Locates and runs the independent peer tools (Python `smp`, `cbor2`, `imgtool`, `smpmgr`…)
/// that the tests use as oracles.
///
/// Lookup order: `$MCUMGR_PEERS_VENV/bin`, then `.venv/bin` in the package root (where
/// `.ci/run` and `scripts/setup-peers.sh` install them), then `PATH`.
///
/// A missing peer is never a pass. Tests that need one are declared with
/// `Peers.needed("cbor2")` (a trait): outside CI that skips them with the reason shown;
/// in CI (`CI=true`) `available` always answers `true`, so the test runs and fails loudly
/// with the message from ``run(_:_:stdin:)`` instead of being skipped.
///
/// Running a peer is `async`: Swift Testing runs tests on the cooperative pool, which has one
/// thread per core, so a test blocked in `waitUntilExit` would stall every other test. The child
/// is started, fed and drained on dedicated threads and the waiting test is suspended instead.
public enum Peers {
    /// The package root (the folder holding Package.swift), found from this file's path.
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// Whether this run is CI, where every peer must be present.
    public static let isCI: Bool = ProcessInfo.processInfo.environment["CI"].map { $0 == "true" || $0 == "1" } ?? false

    /// How long a peer may run before it is killed: far above any real run (imgtool with an
    /// RSA-3072 key takes seconds), so only a hung tool reaches it, and the test then fails
    /// instead of hanging the whole run. Not 120 s: `generate-dbus-vectors.py --check` (a few
    /// seconds alone) reached that under a load average of 42.
    public static let processTimeout: Duration = .seconds(900)

    /// Blocks until `process` has exited, without spinning: Foundation's `waitUntilExit` on Linux
    /// spins its run loop (a child's watcher was seen at 30–45 % of a core, and the four a fleet
    /// test watches held a whole core from the niced processes under test). `waitid` with
    /// `WNOWAIT` sleeps until the exit and leaves the reaping to Foundation, whose status is then
    /// a moment away.
    public static func waitForExit(_ process: Process) {
        var info = siginfo_t()
        while waitid(P_PID, id_t(process.processIdentifier), &info, WEXITED | WNOWAIT) == -1, errno == EINTR {}
        while process.isRunning { usleep(1_000) }
    }

    /// One running peer per core but one: dozens of parameterised imgtool tests starting a Python
    /// interpreter each at once would only thrash, and would push the ones started first toward
    /// their timeout; and a core is left to the test process itself, whose in-process simulated
    /// devices must keep answering within the short timeouts of the fault tests while peers run.
    private static let slots = AsyncSemaphore(limit: max(1, ProcessInfo.processInfo.activeProcessorCount - 1))

    private static let searchDirectories: [String] = {
        var dirs: [String] = []
        if let venv = ProcessInfo.processInfo.environment["MCUMGR_PEERS_VENV"] { dirs.append(venv + "/bin") }
        dirs.append(packageRoot.appendingPathComponent(".venv/bin").path)
        dirs += (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return dirs
    }()

    /// The full path of an executable peer, or `nil`.
    /// - Parameter tool: the executable's name, e.g. `imgtool`.
    public static func path(of tool: String) -> String? {
        for dir in searchDirectories {
            let candidate = dir + "/" + tool
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The Python interpreter that has the peers installed.
    public static var python: String? { path(of: "python3") ?? path(of: "python") }

    /// Whether a peer can be used: a Python module name (`cbor2`, `smp`, `smpclient`,
    /// `mcumgr_toolkit`) or an executable (`imgtool`, `smpmgr`). Always `true` in CI, so that a
    /// missing peer fails there instead of being skipped.
    ///
    /// Synchronous because `.enabled(if:)` takes a synchronous condition; it runs at most one
    /// short `python -c "import …"` per name and caches the answer.
    /// - Parameter name: the module or executable name.
    public static func available(_ name: String) -> Bool {
        if isCI { return true }
        return cache.withLock { cache in
            if let known = cache[name] { return known }
            let found: Bool
            if ["python3", "python"].contains(name) {
                // The interpreter itself (the venv's, else the system's), not a module.
                found = python != nil
            } else if path(of: name) != nil {
                found = true
            } else if let python {
                found = (try? runProcessBlocking(python, ["-c", "import \(name)"]).status) == 0
            } else {
                found = false
            }
            cache[name] = found
            return found
        }
    }

    private static let cache = Locked<[String: Bool]>([:])

    /// Runs a Python snippet with the peers' interpreter.
    /// - Parameters:
    ///   - script: Python source.
    ///   - arguments: `sys.argv[1:]`.
    ///   - stdin: bytes for standard input.
    /// - Returns: standard output.
    /// - Throws: ``PeerError`` if no interpreter is found, the script exits non-zero or hangs;
    ///   `CancellationError` if the task is cancelled.
    public static func python(_ script: String, _ arguments: [String] = [], stdin: Data? = nil) async throws -> Data {
        guard let python else {
            throw PeerError(message: "python3 with the peers is not installed; run scripts/setup-peers.sh")
        }
        return try await run(python, ["-c", script] + arguments, stdin: stdin)
    }

    /// Runs a peer executable by name or path.
    /// - Parameters:
    ///   - tool: a name looked up like ``path(of:)``, or an absolute path.
    ///   - arguments: its arguments.
    ///   - stdin: bytes for standard input.
    /// - Returns: standard output.
    /// - Throws: ``PeerError`` if the tool is missing, exits non-zero (with its stderr) or hangs;
    ///   `CancellationError` if the task is cancelled.
    public static func run(_ tool: String, _ arguments: [String], stdin: Data? = nil) async throws -> Data {
        guard let executable = tool.hasPrefix("/") ? tool : path(of: tool) else {
            throw PeerError(message: "peer tool `\(tool)` is not installed; run scripts/setup-peers.sh")
        }
        let result = try await runProcess(executable, arguments, stdin: stdin)
        guard result.status == 0 else {
            throw PeerError(
                message: "\(tool) \(arguments.prefix(3).joined(separator: " ")) exited \(result.status): "
                    + String(decoding: result.stderr, as: UTF8.self)
            )
        }
        return result.stdout
    }

    /// Runs a process to completion, collecting both output streams. At most one peer per core
    /// runs at a time; callers beyond that wait suspended.
    /// - Parameters:
    ///   - executable: the absolute path of the program.
    ///   - arguments: its arguments.
    ///   - stdin: bytes for standard input, or `nil` for an empty one.
    ///   - timeout: how long it may run before it is terminated (then killed).
    ///   - directory: the working folder, or the current one.
    ///   - environment: variables added to this process's environment.
    /// - Returns: the exit status (or terminating signal) and both output streams.
    /// - Throws: ``PeerError`` if it cannot be started or hangs past `timeout`;
    ///   `CancellationError` if the task is cancelled (the child is killed).
    public static func runProcess(
        _ executable: String,
        _ arguments: [String],
        stdin: Data?,
        timeout: Duration = processTimeout,
        directory: URL? = nil,
        environment: [String: String] = [:]
    ) async throws -> (status: Int32, stdout: Data, stderr: Data) {
        try await slots.acquire()
        do {
            let child = ChildProcess(executable: executable, arguments: arguments, stdin: stdin, timeout: timeout)
            if let directory { child.process.currentDirectoryURL = directory }
            if !environment.isEmpty {
                child.process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
            }
            let result = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    child.start { continuation.resume(with: $0) }
                }
            } onCancel: {
                child.cancel()
            }
            await slots.release()
            return (result.status, result.stdout, result.stderr)
        } catch {
            await slots.release()
            throw error
        }
    }

    /// ``runProcess(_:_:stdin:timeout:)`` for the one synchronous caller, ``available(_:)``: it
    /// blocks its thread, so it is kept to that short, cached probe.
    private static func runProcessBlocking(_ executable: String, _ arguments: [String]) throws -> ChildProcess.Output {
        let child = ChildProcess(executable: executable, arguments: arguments, stdin: nil, timeout: processTimeout)
        let done = DispatchSemaphore(value: 0)
        let outcome = OutcomeBox()
        child.start { result in
            outcome.set(result)
            done.signal()
        }
        done.wait()
        return try outcome.get()
    }
}

/// A peer tool was missing or failed.
public struct PeerError: Error, CustomStringConvertible {
    /// What happened, with the tool's stderr.
    public var message: String
    public var description: String { message }
    /// Creates an error.
    /// - Parameter message: what happened.
    public init(message: String) { self.message = message }
}

/// One child process, run entirely on dedicated threads so that no thread of the cooperative
/// pool ever blocks on it. It completes once the child has exited and both of its output pipes
/// have closed (so no output written just before exit is lost), or, after a timeout or
/// cancellation, once it has been killed.
final class ChildProcess: @unchecked Sendable {
    // Mutable state is guarded by `lock`; `process` is configured before it is shared and only
    // touched through its thread-safe members afterwards.

    struct Output: Sendable {
        var status: Int32
        var stdout: Data
        var stderr: Data
    }

    private enum Ending {
        case timedOut
        case cancelled
    }

    // Configured (folder, environment) by `runProcess` before `start`.
    let process = Process()
    private let name: String
    private let arguments: [String]
    private let input: Data?
    private let timeout: Duration
    private let outPipe = Pipe()
    private let errPipe = Pipe()
    /// Only when there is input to write; otherwise the child reads /dev/null.
    private let inPipe: Pipe?

    private let lock = NSLock()
    private var stdout = Data()
    private var stderr = Data()
    private var openPipes = 2
    private var exitStatus: Int32?
    private var launched = false
    private var ending: Ending?
    private var finished = false
    private var completion: (@Sendable (Result<Output, any Error>) -> Void)?

    /// Timers for the timeout and the kill that follows it. A serial queue of its own: its blocks
    /// only send signals and never wait, and it keeps them off the cooperative pool.
    private static let timers = DispatchQueue(label: "SMPTestSupport.Peers.timers")

    /// How long a terminated child gets to exit before SIGKILL, and how long after that we wait
    /// for its pipes before giving up on them (a grandchild may still hold them open).
    private static let grace: Duration = .seconds(2)

    init(executable: String, arguments: [String], stdin: Data?, timeout: Duration) {
        name = URL(fileURLWithPath: executable).lastPathComponent
        self.arguments = arguments
        input = stdin
        self.timeout = timeout
        inPipe = stdin == nil ? nil : Pipe()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = outPipe
        process.standardError = errPipe
        process.standardInput = inPipe ?? FileHandle.nullDevice
    }

    /// Starts the child; `completion` is called exactly once, on some background thread.
    func start(_ completion: @escaping @Sendable (Result<Output, any Error>) -> Void) {
        lock.withLock { self.completion = completion }
        // No `terminationHandler`: with one set, swift-corelibs-foundation never frees the
        // `Process` and its pipes (seen under LeakSanitizer, also in a five-line program); a thread
        // of our own waits for the exit instead (`monitor`).
        // Launch from a thread of our own, with every signal unblocked while spawning: Foundation
        // spawns without resetting the signal mask, so the child inherits the spawning thread's,
        // and the pool's worker threads block SIGTERM (a child spawned from one ignores
        // `terminate()`). A new thread inherits its creator's mask too, hence the explicit reset.
        Thread { [self] in
            var unblocked = sigset_t()
            var previous = sigset_t()
            sigemptyset(&unblocked)
            pthread_sigmask(SIG_SETMASK, &unblocked, &previous)
            let launched = launch()
            // Back to the inherited mask before starting the long-lived reader threads, so that
            // only this short spawn window ever takes process-directed signals meant for others.
            pthread_sigmask(SIG_SETMASK, &previous, nil)
            if launched { monitor() }
        }.start()
    }

    /// Terminates the child (or keeps it from starting) because its task was cancelled.
    func cancel() {
        stop(.cancelled)
    }

    /// What the child wrote so far.
    var outputSoFar: (stdout: Data, stderr: Data) { lock.withLock { (stdout, stderr) } }

    /// What the child wrote on stdout from byte `offset` on.
    func stdout(from offset: Int) -> Data {
        lock.withLock { stdout.count > offset ? stdout.dropFirst(offset) : Data() }
    }

    /// Whether the child was reaped (its output may still be draining).
    var hasExited: Bool { lock.withLock { exitStatus != nil } }

    /// Sends a signal to the running child: nothing before it started, nor once it was reaped
    /// (its pid may then belong to another process).
    func send(_ signal: Int32) {
        lock.withLock {
            guard launched, exitStatus == nil else { return }
            _ = kill(process.processIdentifier, signal)
        }
    }

    /// Spawns the child unless the task was already cancelled; whether it is running.
    private func launch() -> Bool {
        let cancelledEarly = lock.withLock { ending == .cancelled }
        if cancelledEarly {
            complete(.failure(CancellationError()))
            return false
        }
        do {
            try process.run()
            return true
        } catch {
            complete(.failure(PeerError(message: "\(name) could not be started: \(error)")))
            return false
        }
    }

    /// Starts the reader and writer threads and the timeout for a running child.
    private func monitor() {
        // A cancellation that arrived while `run()` was spawning found nothing to signal yet.
        let cancelledMeanwhile = lock.withLock {
            launched = true
            return ending == .cancelled
        }
        Thread { [self] in
            Peers.waitForExit(process)
            let status = process.terminationStatus
            lock.withLock { exitStatus = status }
            finishIfDone()
        }.start()
        drain(outPipe.fileHandleForReading, isStandardError: false)
        drain(errPipe.fileHandleForReading, isStandardError: true)
        if let inPipe, let input { feed(input, to: inPipe.fileHandleForWriting) }
        if cancelledMeanwhile { signalAndEscalate() }
        Self.timers.asyncAfter(deadline: .now() + timeout.timeInterval) { [weak self] in self?.stop(.timedOut) }
    }

    /// Reads one output stream to its end on a dedicated thread, keeping what arrived so far
    /// visible (for the timeout message, and to a test watching a running child). `read(2)`
    /// returns what the pipe holds; `FileHandle.read(upToCount:)` would wait for the count.
    private func drain(_ handle: FileHandle, isStandardError: Bool) {
        Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(handle.fileDescriptor, $0.baseAddress, $0.count) }
                if count < 0 && errno == EINTR { continue }
                // A read error ends the stream as EOF would; what was read is kept.
                guard count > 0 else { break }
                lock.withLock {
                    if isStandardError {
                        stderr.append(contentsOf: buffer[..<count])
                    } else {
                        stdout.append(contentsOf: buffer[..<count])
                    }
                }
            }
            try? handle.close()
            lock.withLock { openPipes -= 1 }
            finishIfDone()
        }.start()
    }

    /// Writes standard input on a dedicated thread: a child that reads only after writing much
    /// output would otherwise deadlock against us.
    private func feed(_ data: Data, to handle: FileHandle) {
        Thread {
            // A child that exits without reading its input makes the write fail with EPIPE.
            // Blocked, SIGPIPE stays pending on this thread and is dropped when it ends, instead
            // of killing the test process.
            var pipeSignal = sigset_t()
            sigemptyset(&pipeSignal)
            sigaddset(&pipeSignal, SIGPIPE)
            pthread_sigmask(SIG_BLOCK, &pipeSignal, nil)
            try? handle.write(contentsOf: data)
            try? handle.close()
        }.start()
    }

    /// Ends the child early: SIGTERM now, SIGKILL after the grace period if it is still alive,
    /// and after another grace period the run is reported even if its pipes are still open.
    private func stop(_ reason: Ending) {
        let shouldSignal: Bool = lock.withLock {
            guard ending == nil, !finished else { return false }
            ending = reason
            return launched
        }
        if shouldSignal { signalAndEscalate() }
    }

    private func signalAndEscalate() {
        let alive = lock.withLock { exitStatus == nil }
        guard alive else {
            // Exited, but something still holds the pipes open: stop waiting for them.
            finishIfDone(force: true)
            return
        }
        process.terminate()
        let pid = process.processIdentifier
        Self.timers.asyncAfter(deadline: .now() + Self.grace.timeInterval) { [weak self] in
            guard let self else { return }
            // Only while not yet reaped, so the pid cannot belong to another process.
            if lock.withLock({ exitStatus == nil }) { kill(pid, SIGKILL) }
            Self.timers.asyncAfter(deadline: .now() + Self.grace.timeInterval) { [weak self] in
                self?.finishIfDone(force: true)
            }
        }
    }

    /// Completes when the child has exited and both pipes have closed; `force` completes an
    /// ended (timed-out or cancelled) run regardless.
    private func finishIfDone(force: Bool = false) {
        let result: Result<Output, any Error>? = lock.withLock {
            let done = exitStatus != nil && openPipes == 0
            guard done || (force && ending != nil) else { return nil }
            switch ending {
            case .timedOut:
                let seconds = timeout.components.seconds
                return .failure(
                    PeerError(
                        message:
                            "\(name) \(arguments.prefix(3).joined(separator: " ")) hung: killed after \(seconds) s; "
                            + "stderr so far: " + String(decoding: stderr, as: UTF8.self)
                    )
                )
            case .cancelled:
                return .failure(CancellationError())
            case nil:
                return .success(Output(status: exitStatus ?? -1, stdout: stdout, stderr: stderr))
            }
        }
        if let result { complete(result) }
    }

    private func complete(_ result: Result<Output, any Error>) {
        let completion: (@Sendable (Result<Output, any Error>) -> Void)? = lock.withLock {
            guard !finished else { return nil }
            finished = true
            defer { self.completion = nil }
            return self.completion
        }
        completion?(result)
    }
}

extension Duration {
    /// The duration in seconds, for Dispatch deadlines.
    fileprivate var timeInterval: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}

private final class OutcomeBox: @unchecked Sendable {
    // Written once by the completion and read after the semaphore that completion signals.
    private var result: Result<ChildProcess.Output, any Error> = .failure(PeerError(message: "no result"))
    func set(_ result: Result<ChildProcess.Output, any Error>) { self.result = result }
    func get() throws -> ChildProcess.Output { try result.get() }
}
