import Foundation

/// Runs a blocking read loop on a thread of its own: the package's one way to start a thread.
///
/// Transports read sockets and ttys with blocking calls (with short timeouts so they notice a
/// close). Those calls must not run on Swift's cooperative thread pool, which has one thread
/// per core: two blocked readers would stall every task on a two-core machine. The UDP and serial
/// transports, the D-Bus reader and handshake, the BlueZ link's notification and write-room
/// loops, `UDPReceiveLoop` and the simulator's pty and BlueZ servers all run here; a blocking job
/// done once is a loop whose first iteration returns `false`.
package enum BlockingReadLoop {
    /// Starts the loop.
    /// - Parameters:
    ///   - name: the thread's name, for debuggers.
    ///   - iteration: one read; returns `false` to stop the loop.
    package static func start(name: String, _ iteration: @escaping @Sendable () -> Bool) {
        let thread = Thread {
            while iteration() {}
        }
        thread.name = name
        thread.start()
    }

    /// Starts a loop that keeps state from one read to the next (a receive buffer reused for
    /// every read instead of one allocated per read); only the loop's thread touches it.
    /// - Parameters:
    ///   - name: the thread's name, for debuggers.
    ///   - state: the state the first read starts with.
    ///   - iteration: one read; returns `false` to stop the loop.
    package static func start<State: Sendable>(
        name: String,
        state: State,
        _ iteration: @escaping @Sendable (inout State) -> Bool
    ) {
        let thread = Thread {
            var state = state
            while iteration(&state) {}
        }
        thread.name = name
        thread.start()
    }
}
