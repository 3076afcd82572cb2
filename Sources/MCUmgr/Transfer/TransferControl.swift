import Foundation

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
public final class TransferControl: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var paused = false
    private var inboxes: [Int: TransferInbox<TransferInput>] = [:]
    /// Uploads that stopped sending for the pause.
    private var holding: Set<Int> = []
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var nextID = 0

    /// Creates a control, not paused.
    public init() {}

    /// Whether a pause is asked for.
    public var isPaused: Bool { lock.withLock { paused } }

    /// Asks every upload using this control to pause after the chunks in flight.
    public func pause() { set(paused: true) }

    /// Asks paused uploads to continue from the device's offset.
    public func resume() { set(paused: false) }

    /// Returns once every upload using this control has stopped sending for the pause (nothing
    /// of it is in flight), or at once when no pause is asked for or when it is called off.
    public func waitUntilPaused() async {
        await withCheckedContinuation { continuation in
            let ready: Bool = lock.withLock {
                guard paused, !Set(inboxes.keys).isSubset(of: holding) else { return true }
                waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }

    private func set(paused value: Bool) {
        let (targets, woken): ([TransferInbox<TransferInput>], [CheckedContinuation<Void, Never>]) =
            lock.withLock {
                guard paused != value else { return ([], []) }
                paused = value
                return (Array(inboxes.values), value ? [] : takeWaiters())
            }
        for inbox in targets { inbox.yield(value ? .pause : .resume) }
        for waiter in woken { waiter.resume() }
    }

    /// Connects an upload's inbox; an upload that starts while paused pauses at once. Removed
    /// when the upload ends (its inbox finishes).
    /// - Returns: the upload's identifier here, for ``holds(_:_:)``.
    func attach(_ inbox: TransferInbox<TransferInput>) -> Int {
        let (id, pausedNow): (Int, Bool) = lock.withLock {
            nextID += 1
            inboxes[nextID] = inbox
            return (nextID, paused)
        }
        inbox.onFinish { [weak self] in self?.detach(id) }
        if pausedNow { inbox.yield(.pause) }
        return id
    }

    /// An upload stopped sending for the pause (`true`), or started again (`false`).
    func holds(_ id: Int, _ holdingNow: Bool) {
        let woken: [CheckedContinuation<Void, Never>] = lock.withLock {
            if holdingNow { holding.insert(id) } else { holding.remove(id) }
            return allHolding ? takeWaiters() : []
        }
        for waiter in woken { waiter.resume() }
    }

    private func detach(_ id: Int) {
        let woken: [CheckedContinuation<Void, Never>] = lock.withLock {
            inboxes[id] = nil
            holding.remove(id)
            return allHolding ? takeWaiters() : []
        }
        for waiter in woken { waiter.resume() }
    }

    /// With the lock held.
    private var allHolding: Bool { paused && Set(inboxes.keys).isSubset(of: holding) }

    /// With the lock held.
    private func takeWaiters() -> [CheckedContinuation<Void, Never>] {
        defer { waiters.removeAll() }
        return waiters
    }
}
