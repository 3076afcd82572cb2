import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An owned file descriptor that can be closed from any thread while another thread waits on it.
///
/// Closing a descriptor that another thread is polling is a classic bug: the number can be
/// reused by an unrelated `open` before the poller returns. Here every operation registers
/// itself, ``close()`` only marks the descriptor closed, and the last operation to finish
/// performs the real `close(2)`. Waits are cut into short slices so a blocked reader notices the
/// close within ``pollSlice`` and returns.
final class FileDescriptor: @unchecked Sendable {
    // All mutable state is guarded by `lock`.
    private let lock = NSLock()
    private var descriptor: Int32
    private var isClosed = false
    private var activeOperations = 0

    /// The longest single `poll` inside a wait, in milliseconds.
    static let pollSlice: Int32 = 50

    init(_ descriptor: Int32) {
        self.descriptor = descriptor
    }

    deinit {
        if descriptor >= 0 { _ = systemClose(descriptor) }
    }

    /// Whether ``close()`` was called.
    var closed: Bool {
        lock.lock()
        defer { lock.unlock() }
        return isClosed
    }

    /// Runs `body` with the descriptor, or returns `nil` if it is closed.
    func withDescriptor<T>(_ body: (Int32) throws -> T) rethrows -> T? {
        lock.lock()
        guard !isClosed, descriptor >= 0 else {
            lock.unlock()
            return nil
        }
        activeOperations += 1
        let fd = descriptor
        lock.unlock()
        defer { finishOperation() }
        return try body(fd)
    }

    /// Starts an operation that outlives one call (a poll over many descriptors): the descriptor
    /// stays open until ``release()``, even if ``close()`` comes meanwhile.
    /// - Returns: the descriptor, or `nil` if it is closed (then do not call ``release()``).
    func acquire() -> Int32? {
        lock.lock()
        defer { lock.unlock() }
        guard !isClosed, descriptor >= 0 else { return nil }
        activeOperations += 1
        return descriptor
    }

    /// Ends an operation started with ``acquire()``.
    func release() { finishOperation() }

    private func finishOperation() {
        lock.lock()
        activeOperations -= 1
        var toClose: Int32 = -1
        if isClosed && activeOperations == 0 && descriptor >= 0 {
            toClose = descriptor
            descriptor = -1
        }
        lock.unlock()
        if toClose >= 0 { _ = systemClose(toClose) }
    }

    /// Marks the descriptor closed; the system close happens now or when the last operation ends.
    func close() {
        lock.lock()
        guard !isClosed else {
            lock.unlock()
            return
        }
        isClosed = true
        var toClose: Int32 = -1
        if activeOperations == 0 && descriptor >= 0 {
            toClose = descriptor
            descriptor = -1
        }
        lock.unlock()
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

    private func waitWritable() {
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

// The module's own names shadow these inside the classes; call through these wrappers.
@inline(__always) func systemClose(_ fd: Int32) -> Int32 {
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
