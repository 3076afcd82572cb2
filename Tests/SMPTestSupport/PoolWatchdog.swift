import Foundation
import SMPBytes

/// Finds out what holds the cooperative pool when the test process stalls: with
/// `MCUMGR_TEST_STALL_LOG=PATH` set, a task beats every 50 ms on the pool and a thread of its own
/// watches the beat; a beat late by more than a second is a stall, and the thread appends the
/// stall's start and length to PATH — and, with `MCUMGR_TEST_STALL_STACKS=1`, every thread's
/// stack (gdb) once per stall. gdb stops the process while it reads them (many seconds for
/// this binary), so a run with stacks fails tests of its own: it is for finding a cause. A stall of the pool
/// holds every simulated device, client and upgrade in the process at once, which is how a test
/// with multi-second timeouts fails on an idle machine.
public enum PoolWatchdog {
    /// The last beat's time, and whether the watchdog runs.
    private static let state = Locked<(lastBeat: DispatchTime, started: Bool)>((.now(), false))

    /// Starts the watchdog once, if the environment asks for it.
    public static func startIfRequested() {
        guard let path = ProcessInfo.processInfo.environment["MCUMGR_TEST_STALL_LOG"], !path.isEmpty else { return }
        let first = state.withLock { state in
            defer { state.started = true }
            return !state.started
        }
        guard first else { return }
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        // At the tests' own priority: a beat of a higher one would pass the queue they wait in.
        Task.detached {
            while true {
                try? await Task.sleep(for: .milliseconds(50))
                state.withLock { $0.lastBeat = .now() }
            }
        }
        Thread { watch(path) }.start()
    }

    private static func watch(_ path: String) {
        var stalled = false
        var worst: UInt64 = 0
        while true {
            usleep(100_000)
            // The beat first: one written between the two reads is later than `now`.
            let beat = state.withLock { $0.lastBeat.uptimeNanoseconds }
            let now = DispatchTime.now().uptimeNanoseconds
            let late = now > beat ? now - beat : 0
            if late > 1_000_000_000 {
                worst = max(worst, late)
                if !stalled {
                    stalled = true
                    append(path, "\(Date()) stall began (no beat for \(late / 1_000_000) ms)\n")
                    if ProcessInfo.processInfo.environment["MCUMGR_TEST_STALL_STACKS"] == "1" {
                        appendBacktraces(to: path)
                    }
                }
            } else if stalled {
                stalled = false
                append(path, "\(Date()) stall ended after at least \(worst / 1_000_000) ms\n")
                worst = 0
            }
        }
    }

    /// Every thread's stack, appended to `path` by gdb itself: gdb stops this process while it
    /// reads the stacks, so nothing here could drain a pipe from it.
    private static func appendBacktraces(to path: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = [
            "-c", "exec gdb -batch -nx -p \(getpid()) -ex 'thread apply all bt 30' >>'\(path)' 2>&1",
        ]
        do {
            try process.run()
            Peers.waitForExit(process)
        } catch {
            append(path, "gdb could not run: \(error)\n")
        }
    }

    private static func append(_ path: String, _ text: String) {
        guard let handle = FileHandle(forWritingAtPath: path) else { return }
        handle.seekToEndOfFile()
        handle.write(Data(text.utf8))
        try? handle.close()
    }
}
