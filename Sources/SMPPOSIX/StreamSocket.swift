#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A connected byte-stream socket: TCP to a host and port, or a Unix-domain socket by path
/// (an HCI controller served over a socket, e.g. Bumble's or QEMU's).
///
/// Unlike a datagram socket a stream has an end: ``read(maximumCount:timeout:)`` tells a
/// timeout (an empty array) from the peer closing (`nil`), because a controller that goes away
/// must end every link on it, not look like a quiet one.
public final class StreamSocket: Sendable {
    private let descriptor: FileDescriptor
    /// What the socket is connected to, for errors and logs (`127.0.0.1:6402`, `/tmp/hci.sock`).
    public let peerDescription: String

    /// Connects over TCP, trying each address the name resolves to in turn.
    /// - Parameters:
    ///   - host: a name, an IPv4 address or an IPv6 address (brackets allowed).
    ///   - port: the port.
    /// - Throws: ``SystemCallError`` from name resolution, `socket` or `connect` (the last
    ///   address's failure, e.g. `ECONNREFUSED`).
    public init(connectingTo host: String, port: UInt16) throws(SystemCallError) {
        var lastError = SystemCallError("connect", "\(host):\(port)", code: EADDRNOTAVAIL)
        for candidate in try SocketAddress.resolve(host: host, port: port) {
            let fd = StreamSocket.makeSocket(family: candidate.family)
            guard fd >= 0 else {
                lastError = .errno("socket", candidate.description)
                continue
            }
            let result = candidate.withSockaddr { connect(fd, $0, socklen_t(candidate.storage.count)) }
            guard result == 0 else {
                lastError = .errno("connect", candidate.description)
                _ = systemClose(fd)
                continue
            }
            // HCI packets are small and each one waits for an answer: send them at once.
            var one: Int32 = 1
            _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            setNonBlocking(fd)
            descriptor = FileDescriptor(fd)
            peerDescription = candidate.description
            return
        }
        throw lastError
    }

    /// Connects to a Unix-domain stream socket.
    /// - Parameter path: the socket's path: 1 byte to one less than `sun_path` holds (107 bytes
    ///   on Linux, 103 on Darwin).
    /// - Throws: ``SystemCallError`` (`ENAMETOOLONG` for a long path, `EINVAL` for an empty one,
    ///   `ENOENT`, `ECONNREFUSED` …).
    public init(connectingToUnixPath path: String) throws(SystemCallError) {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty, bytes.count < capacity else {
            throw SystemCallError(
                "connect",
                path,
                code: bytes.isEmpty ? EINVAL : ENAMETOOLONG,
                reason: "a socket path has 1 to \(capacity - 1) bytes"
            )
        }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let fd = StreamSocket.makeSocket(family: AF_UNIX)
        guard fd >= 0 else { throw .errno("socket", path) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let error = SystemCallError.errno("connect", path)
            _ = systemClose(fd)
            throw error
        }
        setNonBlocking(fd)
        descriptor = FileDescriptor(fd)
        peerDescription = path
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { descriptor.closed }

    /// Reads what has arrived, waiting up to `timeout` for the first byte.
    /// - Parameters:
    ///   - maximumCount: the most bytes returned.
    ///   - timeout: how long to wait; `nil` waits until data arrives, the peer closes, or
    ///     ``close()``.
    /// - Returns: the bytes; empty on timeout; `nil` when the peer closed the stream or the
    ///   socket was closed here.
    /// - Throws: ``SystemCallError`` (e.g. `ECONNRESET`).
    public func read(maximumCount: Int = 4096, timeout: Duration?) throws(SystemCallError) -> [UInt8]? {
        guard descriptor.waitReadable(timeout: timeout) else { return descriptor.closed ? nil : [] }
        var buffer = [UInt8](repeating: 0, count: max(1, maximumCount))
        let result: Int? = descriptor.withDescriptor { fd in
            buffer.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return systemRead(fd, base, raw.count)
            }
        }
        guard let count = result, count != 0 else { return nil }
        if count < 0 {
            let code = currentErrno()
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return [] }
            throw SystemCallError("read", peerDescription, code: code)
        }
        return Array(buffer.prefix(count))
    }

    /// Writes every byte, waiting for room as long as it takes.
    /// - Parameter bytes: the bytes.
    /// - Throws: ``SystemCallError`` (`EPIPE` when the peer is gone, `EBADF` after close).
    public func write(_ bytes: [UInt8]) throws(SystemCallError) {
        var offset = 0
        while offset < bytes.count {
            let result: Int? = descriptor.withDescriptor { fd in
                bytes.withUnsafeBytes { raw -> Int in
                    guard let base = raw.baseAddress else { return 0 }
                    return StreamSocket.send(fd, base + offset, raw.count - offset)
                }
            }
            guard let written = result else { throw SystemCallError("write", peerDescription, code: EBADF) }
            if written < 0 {
                let code = currentErrno()
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK {
                    descriptor.waitWritable()
                    continue
                }
                throw SystemCallError("write", peerDescription, code: code)
            }
            offset += written
        }
    }

    /// `send(2)` without SIGPIPE: a controller that closed its socket must be an `EPIPE` error
    /// for the link, not a signal that ends the whole process (Darwin sets `SO_NOSIGPIPE`).
    private static func send(_ fd: Int32, _ pointer: UnsafeRawPointer, _ count: Int) -> Int {
        #if canImport(Darwin)
            Darwin.send(fd, pointer, count, 0)
        #elseif canImport(Glibc)
            Glibc.send(fd, pointer, count, Int32(MSG_NOSIGNAL))
        #else
            Musl.send(fd, pointer, count, Int32(MSG_NOSIGNAL))
        #endif
    }

    /// Closes the socket; a blocked read returns `nil` shortly after. Safe to call more than once.
    public func close() {
        descriptor.close()
    }

    private static func makeSocket(family: Int32) -> Int32 {
        #if canImport(Darwin)
            let fd = socket(family, SOCK_STREAM, 0)
            // A write to a closed peer must be an EPIPE error, not a signal that ends the process.
            var one: Int32 = 1
            if fd >= 0 { _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size)) }
            return fd
        #else
            return socket(family, Int32(SOCK_STREAM.rawValue), 0)
        #endif
    }
}
