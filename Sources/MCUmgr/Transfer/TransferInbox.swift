import Foundation
import SMPBytes

/// A transfer driver's inbox: the answers of its requests (handed over on the client's executor)
/// and a ``TransferControl``'s pause and resume, in the order they came, for one reader.
///
/// It does what an `AsyncStream` did here, for a fraction of the cost: `AsyncStream` is compiled
/// once in the runtime for every element type, so each `yield` and `next` looked up generic type
/// metadata in the runtime's caches; one answer's trip through it was about a tenth of an upload
/// chunk's instructions (callgrind, issue 23). This type is compiled with the engine, for its
/// element types.
final class TransferInbox<Element: Sendable>: Sendable {
    private struct State {
        var buffer: [Element] = []
        /// The next element of `buffer` to hand out (taken elements are dropped once all are taken).
        var head = 0
        var waiter: UnsafeContinuation<Element?, Never>?
        var finished = false
        /// The task of ``reading(isolation:_:)`` was cancelled.
        var readerCancelled = false
        var onFinish: (@Sendable () -> Void)?

        mutating func take() -> Element? {
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

    // A waiting reader is resumed outside the lock.
    private let state = Locked(State())

    /// Adds an element; dropped once the inbox is finished.
    func yield(_ element: Element) {
        let waiting = state.withLock { state -> UnsafeContinuation<Element?, Never>? in
            guard !state.finished else { return nil }
            if let waiting = state.waiter {
                state.waiter = nil
                return waiting
            }
            state.buffer.append(element)
            return nil
        }
        waiting?.resume(returning: element)
    }

    /// Ends the inbox: a waiting reader gets `nil`, later elements are dropped, and the action
    /// given to ``onFinish(_:)`` runs (once).
    func finish() {
        let (waiting, action) = state.withLock { state in
            state.finished = true
            defer {
                state.waiter = nil
                state.onFinish = nil
            }
            return (state.waiter, state.onFinish)
        }
        waiting?.resume(returning: nil)
        action?()
    }

    /// Runs `action` when the inbox finishes (at once if it already has).
    func onFinish(_ action: @escaping @Sendable () -> Void) {
        let now: Bool = state.withLock { state in
            guard !state.finished else { return true }
            state.onFinish = action
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
            let now = state.withLock { state -> Poll? in
                if let ready = state.take() { return .element(ready) }
                // Checked under the lock: a cancellation after this finds the waiter.
                if state.finished || state.readerCancelled || Task.isCancelled { return .finished }
                state.waiter = continuation
                return nil
            }
            switch now {
            case .element(let element)?: continuation.resume(returning: element)
            case .finished?, .empty?: continuation.resume(returning: nil)
            case nil: break
            }
        }
    }

    /// Whether a reader waits (for tests that cancel it mid-wait).
    var hasWaitingReader: Bool { state.withLock { $0.waiter != nil } }

    /// The reading task was cancelled: its wait, and every later one, ends with `nil`.
    private func cancelReader() {
        let waiting = state.withLock { state in
            state.readerCancelled = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiting?.resume(returning: nil)
    }

    private enum Poll {
        case element(Element)
        case finished
        case empty
    }

    /// The next buffered element without waiting.
    private func poll() -> Poll {
        state.withLock { state in
            if let ready = state.take() { return .element(ready) }
            return state.finished || state.readerCancelled ? .finished : .empty
        }
    }
}
