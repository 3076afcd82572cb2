import Foundation
import SMPBytes

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An owned file descriptor that can be closed from any thread while another thread waits on it:
/// the package's one descriptor type (sockets, ttys, the socket pairs BlueZ hands out).
///
/// Closing a descriptor that another thread is polling is a classic bug: the number can be
/// reused by an unrelated `open` before the poller returns. Here every operation registers
/// itself, ``close()`` only marks the descriptor closed, and the last operation to finish
/// performs the real `close(2)`. Waits are cut into short slices so a blocked reader notices the
/// close within ``pollSlice`` and returns.
package final class FileDescriptor: Sendable {
    private struct State {
        var descriptor: Int32
        var isClosed = false
        var activeOperations = 0
    }

    private let state: Locked<State>

    /// The longest single `poll` inside a wait, in milliseconds.
    package static let pollSlice: Int32 = 50

    /// Takes ownership of a descriptor: it is closed by ``close()`` or when this goes away.
    /// - Parameter descriptor: the descriptor.
    package init(_ descriptor: Int32) {
        state = Locked(State(descriptor: descriptor))
    }

    deinit {
        let descriptor = state.withLock { $0.descriptor }
        if descriptor >= 0 { _ = systemClose(descriptor) }
    }

    /// Whether ``close()`` was called.
    package var closed: Bool {
        state.withLock { $0.isClosed }
    }

    /// Runs `body` with the descriptor, or returns `nil` if it is closed.
    package func withDescriptor<T>(_ body: (Int32) throws -> T) rethrows -> T? {
        guard let fd = acquire() else { return nil }
        defer { finishOperation() }
        return try body(fd)
    }

    /// Starts an operation that outlives one call (a poll over many descriptors): the descriptor
    /// stays open until ``release()``, even if ``close()`` comes meanwhile.
    /// - Returns: the descriptor, or `nil` if it is closed (then do not call ``release()``).
    package func acquire() -> Int32? {
        state.withLock { state in
            guard !state.isClosed, state.descriptor >= 0 else { return nil }
            state.activeOperations += 1
            return state.descriptor
        }
    }

    /// Ends an operation started with ``acquire()``.
    package func release() { finishOperation() }

    private func finishOperation() {
        let toClose = state.withLock { state -> Int32 in
            state.activeOperations -= 1
            guard state.isClosed && state.activeOperations == 0 && state.descriptor >= 0 else { return -1 }
            defer { state.descriptor = -1 }
            return state.descriptor
        }
        if toClose >= 0 { _ = systemClose(toClose) }
    }

    /// Marks the descriptor closed; the system close happens now or when the last operation ends.
    package func close() {
        let toClose = state.withLock { state -> Int32 in
            guard !state.isClosed else { return -1 }
            state.isClosed = true
            guard state.activeOperations == 0 && state.descriptor >= 0 else { return -1 }
            defer { state.descriptor = -1 }
            return state.descriptor
        }
        if toClose >= 0 { _ = systemClose(toClose) }
    }

    /// Waits until the descriptor is readable, the deadline passes, or it is closed.
    /// - Parameter timeout: how long to wait; `nil` waits until readable or closed.
    /// - Returns: `true` if readable (or hung up, so a read will report it), `false` on timeout or close.
    func waitReadable(timeout: Duration?) -> Bool {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            var slice = FileDescriptor.pollSlice
            if let deadline {
                let remaining = ContinuousClock.now.duration(to: deadline)
                if remaining <= .zero { return false }
                let ms = remaining.components.seconds * 1000 + remaining.components.attoseconds / 1_000_000_000_000_000
                slice = Int32(max(0, min(Int64(slice), ms)))
            }
            let result: Int32? = withDescriptor { fd in
                var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                return poll(&pfd, 1, slice) > 0 ? 1 : (pfd.revents != 0 ? 1 : 0)
            }
            guard let result else { return false }
            if result == 1 { return true }
        }
    }

    /// Writes every byte, waiting for the descriptor to accept more when it is full.
    /// - Parameters:
    ///   - bytes: the bytes.
    ///   - subject: names the descriptor in errors.
    ///   - timeout: how long to wait for room in total; `nil` waits as long as it takes.
    /// - Throws: ``SystemCallError`` on a write failure, a timeout (`EAGAIN`) or when closed.
    func writeAll(_ bytes: [UInt8], subject: String, timeout: Duration? = nil) throws(SystemCallError) {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        var offset = 0
        while offset < bytes.count {
            let result: Int? = withDescriptor { fd in
                bytes.withUnsafeBytes { buffer in
                    systemWrite(fd, buffer.baseAddress! + offset, bytes.count - offset)
                }
            }
            guard let written = result else { throw SystemCallError("write", subject, code: EBADF) }
            if written < 0 {
                let code = currentErrno()
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK {
                    if let deadline, ContinuousClock.now >= deadline {
                        throw SystemCallError("write", subject, code: code, reason: "nobody is reading")
                    }
                    waitWritable()
                    continue
                }
                throw SystemCallError("write", subject, code: code)
            }
            offset += written
        }
    }

    func waitWritable() {
        _ = withDescriptor { fd in
            var pfd = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
            return poll(&pfd, 1, FileDescriptor.pollSlice)
        }
    }

    /// Reads what is available, up to `maximumCount` bytes, waiting at most `timeout`.
    /// - Returns: the bytes; empty on timeout or after close.
    /// - Throws: ``SystemCallError`` on a read failure.
    func read(maximumCount: Int, timeout: Duration?, subject: String) throws(SystemCallError) -> [UInt8] {
        guard waitReadable(timeout: timeout) else { return [] }
        var buffer = [UInt8](repeating: 0, count: max(1, maximumCount))
        let result: Int? = withDescriptor { fd in
            buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress!, $0.count) }
        }
        guard let count = result else { return [] }
        if count < 0 {
            let code = currentErrno()
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return [] }
            throw SystemCallError("read", subject, code: code)
        }
        return Array(buffer.prefix(count))
    }
}

/// `close(2)`, for a descriptor that no ``FileDescriptor`` owns yet (or one received and
/// refused). Types with a `close()` of their own shadow the C name; they call through this.
/// - Parameter fd: the descriptor.
/// - Returns: what `close(2)` returns.
@inline(__always) package func systemClose(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
        Glibc.close(fd)
    #elseif canImport(Musl)
        Musl.close(fd)
    #else
        Darwin.close(fd)
    #endif
}

@inline(__always) func systemWrite(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.write(fd, pointer, count)
    #elseif canImport(Musl)
        Musl.write(fd, pointer, count)
    #else
        Darwin.write(fd, pointer, count)
    #endif
}

@inline(__always) func systemRead(_ fd: Int32, _ pointer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.read(fd, pointer, count)
    #elseif canImport(Musl)
        Musl.read(fd, pointer, count)
    #else
        Darwin.read(fd, pointer, count)
    #endif
}

/// Sets `O_NONBLOCK` on a descriptor.
func setNonBlocking(_ fd: Int32) {
    let flags = fcntl(fd, F_GETFL, 0)
    if flags >= 0 { _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK) }
}
