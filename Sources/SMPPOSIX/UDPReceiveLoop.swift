import Foundation
import SMPBytes

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Receives the datagrams of many UDP sockets on one thread that sleeps while none arrives.
///
/// A simulated fleet serves hundreds of devices, each on a socket of its own. A thread per socket
/// polling in short slices (so that it notices a close) woke thousands of times a second and
/// burned most of a core with nobody talking to the fleet. Here one `poll(2)` waits on every
/// socket and on a wake pipe, with no timeout: adding or removing a socket, or stopping, writes
/// to the pipe.
///
/// Each socket is held open while it is polled (``UDPSocket/acquireDescriptor()``), so a socket
/// closed meanwhile is closed for real only when the poll returns, and its number cannot be
/// reused under the poll. Remove a socket before closing it; its handler may still be called
/// once for a datagram read before the removal was seen.
package final class UDPReceiveLoop: Sendable {
    // The wake pipe lives exactly as long
    // as this object (closed in `deinit`, not when the thread ends): anyone who can still call
    // `wake()` holds a reference, so its numbers are never closed under a caller. When the thread
    // closed them, a socket removed after the loop stopped wrote its 0x01 into whatever had reused
    // the number — a D-Bus socket, whose bus then closed the connection ("before answering
    // Hello"), or a child's stderr pipe.
    private struct Entry {
        let socket: UDPSocket
        let maximumLength: Int
        let handler: @Sendable ([UInt8], SocketAddress) -> Void
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var stopped = false
        var ended = false
    }

    private let state = Locked(State())
    let wakeRead: Int32
    let wakeWrite: Int32

    /// Starts the loop's thread.
    /// - Parameter name: the thread's name, for debuggers.
    /// - Throws: ``SystemCallError`` when the wake pipe cannot be made.
    package init(name: String) throws(SystemCallError) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { throw SystemCallError.errno("pipe", name) }
        wakeRead = ends[0]
        wakeWrite = ends[1]
        setNonBlocking(wakeRead)
        setNonBlocking(wakeWrite)
        // One pass of the "loop": `run()` is the loop itself, polling every socket at once.
        BlockingReadLoop.start(name: name) { [self] in
            // Signals go to other threads: one caught here would only cut the poll short.
            var all = sigset_t()
            sigfillset(&all)
            pthread_sigmask(SIG_BLOCK, &all, nil)
            run()
            return false
        }
    }

    deinit {
        _ = systemClose(wakeRead)
        _ = systemClose(wakeWrite)
    }

    /// Receives `socket`'s datagrams from now on.
    /// - Parameters:
    ///   - socket: the socket.
    ///   - maximumLength: the largest datagram read whole; longer ones are truncated.
    ///   - handler: called on the loop's thread for every datagram, in arrival order; it must not
    ///     block.
    package func add(
        _ socket: UDPSocket,
        maximumLength: Int,
        handler: @escaping @Sendable ([UInt8], SocketAddress) -> Void
    ) {
        state.withLock {
            $0.entries[ObjectIdentifier(socket)] = Entry(
                socket: socket,
                maximumLength: maximumLength,
                handler: handler
            )
        }
        wake()
    }

    /// Stops receiving `socket`'s datagrams.
    /// - Parameter socket: the socket.
    package func remove(_ socket: UDPSocket) {
        _ = state.withLock { $0.entries.removeValue(forKey: ObjectIdentifier(socket)) }
        wake()
    }

    /// Ends the loop's thread (the sockets stay open: their owners close them).
    package func stop() {
        state.withLock { $0.stopped = true }
        wake()
    }

    /// Whether the loop's thread has ended.
    var hasEnded: Bool { state.withLock { $0.ended } }

    private func wake() {
        var byte: UInt8 = 1
        // A full pipe already holds a wake-up: nothing is lost when this write fails.
        _ = systemWrite(wakeWrite, &byte, 1)
    }

    private func run() {
        while let (held, descriptors) = snapshot() {
            var polled = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            polled += descriptors.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let ready = poll(&polled, nfds_t(polled.count), -1)
            if ready > 0 {
                if polled[0].revents != 0 { drainWakePipe() }
                for (index, entry) in held.enumerated() where polled[index + 1].revents != 0 {
                    // Every datagram queued now, then back to the poll.
                    while let (bytes, sender) = try? entry.socket.receiveIfReady(maximumLength: entry.maximumLength) {
                        entry.handler(bytes, sender)
                    }
                }
            }
            for entry in held { entry.socket.releaseDescriptor() }
        }
        state.withLock { $0.ended = true }
    }

    /// The sockets to poll, each held open; `nil` once stopped.
    private func snapshot() -> ([Entry], [Int32])? {
        let (current, stop) = state.withLock { (Array($0.entries.values), $0.stopped) }
        guard !stop else { return nil }
        var held: [Entry] = []
        var descriptors: [Int32] = []
        for entry in current {
            guard let fd = entry.socket.acquireDescriptor() else { continue }
            held.append(entry)
            descriptors.append(fd)
        }
        return (held, descriptors)
    }

    private func drainWakePipe() {
        var byte: UInt8 = 0
        while systemRead(wakeRead, &byte, 1) > 0 {}
    }
}
