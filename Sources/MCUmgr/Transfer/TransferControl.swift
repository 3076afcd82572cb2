import Foundation
import SMPBytes

/// Pauses and resumes uploads while they run: pass one to ``SMPClient/upload(_:options:control:)``.
///
/// A pause stops sending after the chunks in flight (their answers are still taken); the upload
/// then waits. A resume reopens the upload session, whose answer is the device's offset, and
/// continues from there. Cancelling the consuming task still ends a paused upload.
///
/// ```swift
/// let control = TransferControl()
/// let events = client.upload(upload, control: control)
/// control.pause()                    // e.g. when the app goes to the background
/// await control.waitUntilPaused()    // nothing is in flight any more
/// control.resume()
/// ```
public final class TransferControl: Sendable {
    private struct State {
        var paused = false
        var inboxes: [Int: TransferInbox<TransferInput>] = [:]
        /// Uploads that stopped sending for the pause.
        var holding: Set<Int> = []
        var waiters: [CheckedContinuation<Void, Never>] = []
        var nextID = 0

        var allHolding: Bool { paused && Set(inboxes.keys).isSubset(of: holding) }

        mutating func takeWaiters() -> [CheckedContinuation<Void, Never>] {
            defer { waiters.removeAll() }
            return waiters
        }
    }

    private let state = Locked(State())

    /// Creates a control, not paused.
    public init() {}

    /// Whether a pause is asked for.
    public var isPaused: Bool { state.withLock { $0.paused } }

    /// Asks every upload using this control to pause after the chunks in flight.
    public func pause() { set(paused: true) }

    /// Asks paused uploads to continue from the device's offset.
    public func resume() { set(paused: false) }

    /// Returns once every upload using this control has stopped sending for the pause (nothing
    /// of it is in flight), or at once when no pause is asked for or when it is called off.
    public func waitUntilPaused() async {
        await withCheckedContinuation { continuation in
            let ready: Bool = state.withLock { state in
                guard state.paused, !Set(state.inboxes.keys).isSubset(of: state.holding) else { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func set(paused value: Bool) {
        let (targets, woken): ([TransferInbox<TransferInput>], [CheckedContinuation<Void, Never>]) =
            state.withLock { state in
                guard state.paused != value else { return ([], []) }
                state.paused = value
                return (Array(state.inboxes.values), value ? [] : state.takeWaiters())
            }
        for inbox in targets { inbox.yield(value ? .pause : .resume) }
        for waiter in woken { waiter.resume() }
    }

    /// Connects an upload's inbox; an upload that starts while paused pauses at once. Removed
    /// when the upload ends (its inbox finishes).
    /// - Returns: the upload's identifier here, for ``holds(_:_:)``.
    func attach(_ inbox: TransferInbox<TransferInput>) -> Int {
        let (id, pausedNow): (Int, Bool) = state.withLock { state in
            state.nextID += 1
            state.inboxes[state.nextID] = inbox
            return (state.nextID, state.paused)
        }
        inbox.onFinish { [weak self] in self?.detach(id) }
        if pausedNow { inbox.yield(.pause) }
        return id
    }

    /// An upload stopped sending for the pause (`true`), or started again (`false`).
    func holds(_ id: Int, _ holdingNow: Bool) {
        let woken: [CheckedContinuation<Void, Never>] = state.withLock { state in
            if holdingNow { state.holding.insert(id) } else { state.holding.remove(id) }
            return state.allHolding ? state.takeWaiters() : []
        }
        for waiter in woken { waiter.resume() }
    }

    private func detach(_ id: Int) {
        let woken: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.inboxes[id] = nil
            state.holding.remove(id)
            return state.allHolding ? state.takeWaiters() : []
        }
        for waiter in woken { waiter.resume() }
    }
}
