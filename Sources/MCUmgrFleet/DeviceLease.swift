import SMPLink

/// How long this worker may still talk to a device it claimed from a shared store, by its own
/// clock: until the lease it was granted or last renewed, counted from the moment it asked and
/// less a third, so that a request sent just before the end has time to be answered before the
/// store can give the device to another worker.
///
/// Every frame to the device waits here. A worker that stalled past its lease (stopped, starved,
/// swapped out) therefore sends nothing more until a renewal says the device is still its own;
/// when the renewal says another worker has it, the wait fails and the upgrade ends. Without
/// this, a resumed worker's upgrade went on sending to a device another worker was upgrading,
/// for as long as it took the resumed worker to notice.
actor DeviceLease {
    private let clock: FleetClock
    /// On ``clock``'s elapsed time.
    private var deadline: Duration
    private var revoked = false
    private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
    private var nextWaiter = 0

    /// A lease granted by a claim.
    /// - Parameters:
    ///   - asked: when the claim was asked for, on `clock` (the store's lease starts after it).
    ///   - lease: the lease's length.
    ///   - clock: the rollout's clock.
    init(asked: Duration, lease: Duration, clock: FleetClock) {
        self.clock = clock
        deadline = Self.deadline(asked: asked, lease: lease)
    }

    private static func deadline(asked: Duration, lease: Duration) -> Duration {
        asked + lease - lease / 3
    }

    /// Returns while the lease holds; waits for a renewal once it ran out.
    /// - Throws: `CancellationError` once the device is another worker's, or when the waiting
    ///   task is cancelled.
    func permit() async throws {
        if revoked { throw CancellationError() }
        guard clock.elapsed >= deadline else { return }
        let id = nextWaiter
        nextWaiter += 1
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                guard !Task.isCancelled else { return continuation.resume(throwing: CancellationError()) }
                waiters[id] = continuation
            }
        } onCancel: {
            Task { await self.cancelWaiter(id) }
        }
    }

    private func cancelWaiter(_ id: Int) {
        waiters.removeValue(forKey: id)?.resume(throwing: CancellationError())
    }

    /// The store renewed the lease.
    /// - Parameters:
    ///   - asked: when the renewal was asked for, on the rollout's clock.
    ///   - lease: the lease's length.
    func renewed(asked: Duration, lease: Duration) {
        deadline = max(deadline, Self.deadline(asked: asked, lease: lease))
        guard !revoked, clock.elapsed < deadline else { return }
        for waiter in waiters.values { waiter.resume() }
        waiters = [:]
    }

    /// The device is not this worker's any more (or its upgrade is over): nothing more is sent.
    func revoke() {
        revoked = true
        for waiter in waiters.values { waiter.resume(throwing: CancellationError()) }
        waiters = [:]
    }
}

/// A transport whose every connection and frame waits for the device's lease.
struct LeasedTransport: SMPTransport {
    let inner: any SMPTransport
    let lease: DeviceLease

    var endpointDescription: String { inner.endpointDescription }

    func connect() async throws -> any SMPConnection {
        try await lease.permit()
        return Connection(inner: try await inner.connect(), lease: lease)
    }

    private struct Connection: SMPConnection {
        let inner: any SMPConnection
        let lease: DeviceLease
        var maximumFrameSize: Int { inner.maximumFrameSize }
        var frames: AsyncThrowingStream<[UInt8], any Error> { inner.frames }
        var deviceBufferOverhead: Int { inner.deviceBufferOverhead }
        var frameSizeFollowsDevice: Bool { inner.frameSizeFollowsDevice }
        var frameSizeIsChosen: Bool { inner.frameSizeIsChosen }

        func send(_ frame: [UInt8]) async throws {
            try await lease.permit()
            try await inner.send(frame)
        }

        func close() async { await inner.close() }
    }
}
