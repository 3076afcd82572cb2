import Foundation

/// A transfer driver's inbox: the answers of its requests (handed over on the client's executor)
/// and a ``TransferControl``'s pause and resume, in the order they came, for one reader.
///
/// It does what an `AsyncStream` did here, for a fraction of the cost: `AsyncStream` is compiled
/// once in the runtime for every element type, so each `yield` and `next` looked up generic type
/// metadata in the runtime's caches; one answer's trip through it was about a tenth of an upload
/// chunk's instructions (callgrind, issue 23). This type is compiled with the engine, for its
/// element types.
final class TransferInbox<Element: Sendable>: @unchecked Sendable {
    // `lock` guards everything below; a waiting reader is resumed outside it.
    private let lock = NSLock()
    private var buffer: [Element] = []
    /// The next element of `buffer` to hand out (taken elements are dropped once all are taken).
    private var head = 0
    private var waiter: UnsafeContinuation<Element?, Never>?
    private var finished = false
    /// The task of ``reading(isolation:_:)`` was cancelled.
    private var readerCancelled = false
    private var onFinish: (@Sendable () -> Void)?

    /// Adds an element; dropped once the inbox is finished.
    func yield(_ element: Element) {
        lock.lock()
        guard !finished else {
            lock.unlock()
            return
        }
        if let waiting = waiter {
            waiter = nil
            lock.unlock()
            waiting.resume(returning: element)
            return
        }
        buffer.append(element)
        lock.unlock()
    }

    /// Ends the inbox: a waiting reader gets `nil`, later elements are dropped, and the action
    /// given to ``onFinish(_:)`` runs (once).
    func finish() {
        lock.lock()
        finished = true
        let waiting = waiter
        waiter = nil
        let action = onFinish
        onFinish = nil
        lock.unlock()
        waiting?.resume(returning: nil)
        action?()
    }

    /// Runs `action` when the inbox finishes (at once if it already has).
    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let now: Bool = lock.withLock {
            guard !finished else { return true }
            onFinish = action
            return false
        }
        if now { action() }
    }

    /// Runs a reader — a transfer's loop — so that cancelling its task ends its waits in
    /// ``next(isolation:)`` with `nil`, now and later.
    ///
    /// One cancellation handler for the whole transfer rather than one per wait: a handler
    /// installed and removed around every wait cost about 1,500 instructions per uploaded chunk
    /// (callgrind of a 4 MiB upload, issue 23: 79.8–80.5 instructions per byte before, 79.1–79.3
    /// after).
    /// - Parameters:
    ///   - isolation: where `body` runs: its caller's executor.
    ///   - body: the reader.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws.
    func reading<T>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T) async throws -> T {
        try await withTaskCancellationHandler {
            try await body()
        } onCancel: {
            cancelReader()
        }
    }

    /// The next element, in order.
    /// - Parameter isolation: where the reader runs, and is resumed: its caller's executor.
    /// - Returns: the element; `nil` once the inbox is finished and empty, or when the reading
    ///   task is cancelled: before it waits, or while it waits inside ``reading(isolation:_:)``
    ///   (the reader then checks for cancellation).
    func next(isolation: isolated (any Actor)? = #isolation) async -> Element? {
        switch poll() {
        case .element(let element): return element
        case .finished: return nil
        case .empty: break
        }
        return await withUnsafeContinuation(isolation: isolation) {
            (continuation: UnsafeContinuation<Element?, Never>) in
            lock.lock()
            if let ready = takeLocked() {
                lock.unlock()
                continuation.resume(returning: ready)
            } else if finished || readerCancelled || Task.isCancelled {
                // Checked under the lock: a cancellation after this finds the waiter.
                lock.unlock()
                continuation.resume(returning: nil)
            } else {
                waiter = continuation
                lock.unlock()
            }
        }
    }

    /// Whether a reader waits (for tests that cancel it mid-wait).
    var hasWaitingReader: Bool { lock.withLock { waiter != nil } }

    /// The reading task was cancelled: its wait, and every later one, ends with `nil`.
    private func cancelReader() {
        lock.lock()
        readerCancelled = true
        let waiting = waiter
        waiter = nil
        lock.unlock()
        waiting?.resume(returning: nil)
    }

    private enum Poll {
        case element(Element)
        case finished
        case empty
    }

    /// The next buffered element without waiting.
    private func poll() -> Poll {
        lock.lock()
        defer { lock.unlock() }
        if let ready = takeLocked() { return .element(ready) }
        return finished || readerCancelled ? .finished : .empty
    }

    /// With the lock held.
    private func takeLocked() -> Element? {
        guard head < buffer.count else { return nil }
        let element = buffer[head]
        head += 1
        if head == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            head = 0
        }
        return element
    }
}
