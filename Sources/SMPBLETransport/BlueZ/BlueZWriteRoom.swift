// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Dispatch
    import SMPBytes
    import SMPLink
    import SMPPOSIX

    /// Waits for an acquired write socket to take more: one loop per socket serves every wait.
    ///
    /// A full socket is the link's back-pressure, and the transport core waits for room after each
    /// refused write. A thread started per wait cost a thread start on every full socket; here one
    /// loop (``BlockingReadLoop``) sleeps until someone waits, then polls the socket for writing in
    /// slices, as that thread did, and wakes every waiter once there is room. When the socket closes
    /// the loop fails its waiters and ends; a wait after that fails at once.
    final class BlueZWriteRoom: Sendable {
        private struct State {
            var waiters: [CheckedContinuation<Void, any Error>] = []
            /// The loop ended (the socket closed): nobody would wake a new waiter.
            var ended = false
        }

        private let state = Locked(State())
        /// Signalled when a waiter arrives, and by ``socketClosed()``: the loop sleeps on it.
        private let wanted = DispatchSemaphore(value: 0)

        /// Starts the loop for `socket`.
        /// - Parameter socket: the write socket; the loop ends when it is closed.
        init(_ socket: BlueZSocket) {
            let state = state
            let wanted = wanted
            BlockingReadLoop.start(name: "mcumgr.bluez.write-wait") { [weak self] in
                // Dropped without a close, nobody would signal: look once a second.
                guard wanted.wait(timeout: .now() + 1) == .success else { return self != nil && !socket.isClosed }
                guard state.withLock({ !$0.waiters.isEmpty }) || socket.isClosed else { return true }
                while true {
                    switch socket.poll(forWriting: true) {
                    case true?:
                        let waiters = state.withLock { state in
                            defer { state.waiters = [] }
                            return state.waiters
                        }
                        for waiter in waiters { waiter.resume() }
                        return true
                    case false?:
                        let waiters = state.withLock { state in
                            state.ended = true
                            defer { state.waiters = [] }
                            return state.waiters
                        }
                        for waiter in waiters { waiter.resume(throwing: Self.closed) }
                        return false
                    case nil:
                        continue
                    }
                }
            }
        }

        private static var closed: SMPTransportError { SMPTransportError(.disconnected, "the write socket closed") }

        /// Returns once the socket takes a write (or has hung up: the write then says so).
        /// - Throws: `SMPTransportError` `.disconnected` when the socket is closed.
        func wait() async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ended = state.withLock { state -> Bool in
                    guard !state.ended else { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if ended {
                    continuation.resume(throwing: Self.closed)
                } else {
                    wanted.signal()
                }
            }
        }

        /// The socket was closed: wakes the loop, which fails the waiters and ends.
        func socketClosed() {
            wanted.signal()
        }
    }
#endif
