import Foundation

/// A counting semaphore whose waiters are suspended tasks, not blocked threads.
public actor AsyncSemaphore {
    private var free: Int
    private var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
    private var nextID: UInt64 = 0

    /// Creates a semaphore.
    /// - Parameter limit: how many holders at once.
    public init(limit: Int) { free = limit }

    /// Takes a slot, waiting (suspended) for one if none is free.
    /// - Throws: `CancellationError` if the task is cancelled while waiting.
    public func acquire() async throws {
        try Task.checkCancellation()
        if free > 0 {
            free -= 1
            return
        }
        let id = nextID
        nextID += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Cancelled between the check above and here: the handler's removal may
                // already have run and found nothing, so refuse now.
                if Task.isCancelled {
                    continuation.resume(throwing: CancellationError())
                } else {
                    waiters.append((id, continuation))
                }
            }
        } onCancel: {
            Task { await self.removeWaiter(id) }
        }
    }

    /// Returns a slot, handing it straight to the longest waiter if there is one.
    public func release() {
        if waiters.isEmpty {
            free += 1
        } else {
            waiters.removeFirst().continuation.resume()
        }
    }

    private func removeWaiter(_ id: UInt64) {
        guard let index = waiters.firstIndex(where: { $0.id == id }) else { return }
        waiters.remove(at: index).continuation.resume(throwing: CancellationError())
    }
}

/// Bounds the suite's own CPU bursts. Swift Testing starts every test at once on a cooperative
/// pool of one thread per core, and a job runs until its next suspension: a command line parsed
/// in-process costs tens of milliseconds of CPU in a debug build (swift-argument-parser checks
/// every command's options by reflection there), and a few hundred of them queued together held
/// both threads for seconds, so that every in-process device and client of the process stalled
/// past its timeouts (seen with ``PoolWatchdog``). Work behind this waits suspended, costing the
/// pool nothing, and at most a few such jobs are ever queued ahead of a timer's wake-up.
public enum CPUBound {
    private static let slots = AsyncSemaphore(limit: max(2, ProcessInfo.processInfo.activeProcessorCount))

    /// Runs `body` once a slot is free (at once, without one, in a cancelled task: it is ending).
    /// - Parameter body: the CPU-heavy work.
    /// - Returns: what `body` returns.
    public static func run<T: Sendable>(_ body: () async throws -> T) async rethrows -> T {
        let holding = (try? await slots.acquire()) != nil
        do {
            let result = try await body()
            if holding { await slots.release() }
            return result
        } catch {
            if holding { await slots.release() }
            throw error
        }
    }
}
