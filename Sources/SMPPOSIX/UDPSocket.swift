#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 socket address (`sockaddr_in`/`sockaddr_in6`), as a value.
public struct SocketAddress: Sendable, Hashable, CustomStringConvertible {
    /// The raw `sockaddr_storage` bytes, trimmed to the address length.
    let storage: [UInt8]

    init(_ pointer: UnsafePointer<sockaddr>, length: socklen_t) {
        storage = Array(UnsafeRawBufferPointer(start: pointer, count: Int(length)))
    }

    /// The address family: `AF_INET` or `AF_INET6`.
    public var family: Int32 {
        withSockaddr { Int32($0.pointee.sa_family) }
    }

    /// Whether this is an IPv6 address.
    public var isIPv6: Bool { family == AF_INET6 }

    /// The numeric host, e.g. `127.0.0.1` or `::1`.
    public var host: String {
        withSockaddr { pointer in
            var buffer = [CChar](repeating: 0, count: Int(NI_MAXHOST))
            let result = getnameinfo(
                pointer,
                socklen_t(storage.count),
                &buffer,
                socklen_t(buffer.count),
                nil,
                0,
                NI_NUMERICHOST
            )
            guard result == 0 else { return "?" }
            return cArrayString(buffer)
        }
    }

    /// The port number.
    public var port: UInt16 {
        withSockaddr { pointer in
            if Int32(pointer.pointee.sa_family) == AF_INET6 {
                return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
                    UInt16(bigEndian: $0.pointee.sin6_port)
                }
            }
            return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
                UInt16(bigEndian: $0.pointee.sin_port)
            }
        }
    }

    /// `host:port`, with IPv6 hosts in brackets (`[::1]:1337`).
    public var description: String { isIPv6 ? "[\(host)]:\(port)" : "\(host):\(port)" }

    func withSockaddr<T>(_ body: (UnsafePointer<sockaddr>) -> T) -> T {
        var copy = sockaddr_storage()
        return withUnsafeMutableBytes(of: &copy) { raw in
            raw.copyBytes(from: storage.prefix(raw.count))
            return body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self))
        }
    }

    /// Resolves a host name or numeric address with `getaddrinfo`.
    /// - Parameters:
    ///   - host: a name (`localhost`), an IPv4 address or an IPv6 address (brackets allowed).
    ///   - port: the port.
    ///   - passive: resolve for `bind` (an empty host then means "any address").
    /// - Returns: the candidate addresses in the resolver's order.
    /// - Throws: ``SystemCallError`` when the name does not resolve.
    public static func resolve(host: String, port: UInt16, passive: Bool = false) throws(SystemCallError)
        -> [SocketAddress]
    {
        var host = host
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Darwin)
            hints.ai_socktype = SOCK_DGRAM
        #else
            hints.ai_socktype = Int32(SOCK_DGRAM.rawValue)
        #endif
        hints.ai_flags = passive ? AI_PASSIVE : 0
        var result: UnsafeMutablePointer<addrinfo>?
        let status =
            host.isEmpty
            ? getaddrinfo(nil, String(port), &hints, &result)
            : getaddrinfo(host, String(port), &hints, &result)
        guard status == 0, let first = result else {
            throw SystemCallError(
                "getaddrinfo",
                "\(host):\(port)",
                code: -status,
                reason: String(cString: gai_strerror(status))
            )
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node {
            if let address = current.pointee.ai_addr,
                current.pointee.ai_family == AF_INET || current.pointee.ai_family == AF_INET6
            {
                addresses.append(SocketAddress(address, length: current.pointee.ai_addrlen))
            }
            node = current.pointee.ai_next
        }
        guard !addresses.isEmpty else {
            throw SystemCallError(
                "getaddrinfo",
                "\(host):\(port)",
                code: EADDRNOTAVAIL,
                reason: "no IPv4 or IPv6 address"
            )
        }
        return addresses
    }
}

/// A UDP socket: bound (a server such as the simulator) or connected (a client transport).
///
/// One datagram is one SMP frame. Receiving waits with `poll` in short slices, so a receive
/// blocked on another thread returns (with `nil`) soon after ``close()``.
///
/// ```swift
/// let server = try UDPSocket(bindingTo: "127.0.0.1", port: 0)   // port 0: the system picks
/// let client = try UDPSocket(connectingTo: "127.0.0.1", port: server.localAddress.port)
/// try client.send([0x0a, 0, 0, 0, 0, 0, 0, 0])
/// if let (bytes, sender) = try server.receive(timeout: .seconds(1)) { try server.send(bytes, to: sender) }
/// ```
public final class UDPSocket: Sendable {
    private let descriptor: FileDescriptor
    /// The address the socket is bound to (with the real port when bound to port 0).
    public let localAddress: SocketAddress
    /// The peer of a connected socket; `nil` for a bound one.
    public let remoteAddress: SocketAddress?

    /// The largest datagram ``receive(timeout:maximumLength:)`` reads by default.
    public static let maximumDatagramSize = 65_507

    /// Binds a socket for receiving datagrams from anyone.
    /// - Parameters:
    ///   - host: the local address (`127.0.0.1`, `::1`, `0.0.0.0`, `::`, a name); empty for any.
    ///   - port: the local port; 0 lets the system choose (read it back from ``localAddress``).
    /// - Throws: ``SystemCallError`` from name resolution, `socket` or `bind` (`EADDRINUSE` when
    ///   another socket holds the port).
    public convenience init(bindingTo host: String, port: UInt16) throws(SystemCallError) {
        let candidates = try SocketAddress.resolve(host: host, port: port, passive: true)
        try self.init(candidates, "bind", "\(host):\(port)", connected: false) { fd, candidate in
            // No SO_REUSEADDR: on Linux it lets a second UDP socket bind the same port and steal
            // datagrams; an address in use must be an error.
            var one: Int32 = 1
            if candidate.isIPv6 {
                _ = setsockopt(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, &one, socklen_t(MemoryLayout<Int32>.size))
            }
            return candidate.withSockaddr { bind(fd, $0, socklen_t(candidate.storage.count)) }
        }
    }

    /// Creates a socket connected to one peer: ``send(_:)`` goes there and only its datagrams
    /// are received.
    /// - Parameters:
    ///   - host: the peer's name or address; IPv6 with or without brackets.
    ///   - port: the peer's port.
    /// - Throws: ``SystemCallError`` from name resolution, `socket` or `connect`.
    public convenience init(connectingTo host: String, port: UInt16) throws(SystemCallError) {
        let candidates = try SocketAddress.resolve(host: host, port: port)
        try self.init(candidates, "connect", "\(host):\(port)", connected: true) { fd, candidate in
            candidate.withSockaddr { connect(fd, $0, socklen_t(candidate.storage.count)) }
        }
    }

    /// Tries the addresses in turn: a socket of the address's family, then `attach` (`bind` or
    /// `connect`); the first socket attached is kept, non-blocking.
    /// - Parameters:
    ///   - candidates: the resolved addresses.
    ///   - call: the attaching call's name, for errors.
    ///   - subject: what was asked for, for the error when no address was tried.
    ///   - connected: whether the address is the peer's (`connect`) rather than ours (`bind`).
    ///   - attach: binds or connects a socket to an address; 0 on success, else `errno` is set.
    /// - Throws: ``SystemCallError`` of the last address's failure.
    private init(
        _ candidates: [SocketAddress],
        _ call: String,
        _ subject: String,
        connected: Bool,
        _ attach: (Int32, SocketAddress) -> Int32
    ) throws(SystemCallError) {
        var lastError = SystemCallError(call, subject, code: EADDRNOTAVAIL)
        for candidate in candidates {
            let fd = UDPSocket.makeSocket(family: candidate.family)
            guard fd >= 0 else {
                lastError = .errno("socket", candidate.description)
                continue
            }
            if attach(fd, candidate) != 0 {
                lastError = .errno(call, candidate.description)
                _ = systemClose(fd)
                continue
            }
            setNonBlocking(fd)
            descriptor = FileDescriptor(fd)
            localAddress = UDPSocket.localAddress(of: fd) ?? candidate
            remoteAddress = connected ? candidate : nil
            return
        }
        throw lastError
    }

    /// Whether ``close()`` was called.
    public var isClosed: Bool { descriptor.closed }

    /// Sends one datagram to the connected peer.
    /// - Parameter bytes: the datagram.
    /// - Throws: ``SystemCallError`` (`EBADF` after close, `EMSGSIZE` if too large, `ECONNREFUSED`…).
    public func send(_ bytes: [UInt8]) throws(SystemCallError) {
        let result: Int? = descriptor.withDescriptor { fd in
            bytes.withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count) }
        }
        // The address is formatted only for an error: every datagram of an upload goes through here.
        try check(result, "send", remoteAddress?.description ?? localAddress.description)
    }

    /// Sends one datagram to an address (a bound socket answering a client).
    /// - Parameters:
    ///   - bytes: the datagram.
    ///   - address: the destination, e.g. the sender returned by ``receive(timeout:maximumLength:)``.
    /// - Throws: ``SystemCallError``.
    public func send(_ bytes: [UInt8], to address: SocketAddress) throws(SystemCallError) {
        let result: Int? = descriptor.withDescriptor { fd in
            address.withSockaddr { sa in
                bytes.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, 0, sa, socklen_t(address.storage.count)) }
            }
        }
        try check(result, "sendto", address.description)
    }

    private func check(
        _ result: Int?,
        _ operation: String,
        _ subject: @autoclosure () -> String
    ) throws(SystemCallError) {
        guard let result else { throw SystemCallError(operation, subject(), code: EBADF, reason: "socket closed") }
        if result < 0 { throw SystemCallError.errno(operation, subject()) }
    }

    /// Waits for one datagram.
    /// - Parameters:
    ///   - timeout: how long to wait; `nil` waits until a datagram arrives or the socket is closed.
    ///   - maximumLength: the largest datagram read whole; longer ones are truncated.
    /// - Returns: the datagram and its sender, or `nil` on timeout or after ``close()``.
    /// - Throws: ``SystemCallError`` on a receive failure (e.g. `ECONNREFUSED` on a connected
    ///   socket whose peer is not listening).
    public func receive(
        timeout: Duration?,
        maximumLength: Int = UDPSocket.maximumDatagramSize
    ) throws(SystemCallError) -> (bytes: [UInt8], sender: SocketAddress)? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            let remaining = deadline.map { ContinuousClock.now.duration(to: $0) }
            if let remaining, remaining <= .zero { return nil }
            guard descriptor.waitReadable(timeout: remaining) else { return nil }
            if let datagram = try receiveIfReady(maximumLength: maximumLength) { return datagram }
            if isClosed { return nil }
        }
    }

    /// Reads one datagram if one is queued, without waiting.
    /// - Parameter maximumLength: the largest datagram read whole; longer ones are truncated.
    /// - Returns: the datagram and its sender, or `nil` when none is queued or the socket is closed.
    /// - Throws: ``SystemCallError`` on a receive failure.
    package func receiveIfReady(
        maximumLength: Int = UDPSocket.maximumDatagramSize
    ) throws(SystemCallError) -> (bytes: [UInt8], sender: SocketAddress)? {
        while true {
            var storage = sockaddr_storage()
            var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            var received: Int?
            // Not zero-filled: recvfrom writes what it returns, and only that is kept (zeroing
            // 64 KiB for every datagram was a quarter of an upload's instructions).
            let buffer = [UInt8](unsafeUninitializedCapacity: max(1, maximumLength)) { raw, initialized in
                received = descriptor.withDescriptor { fd in
                    withUnsafeMutablePointer(to: &storage) { pointer in
                        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            recvfrom(fd, raw.baseAddress, raw.count, 0, $0, &length)
                        }
                    }
                }
                initialized = max(0, received ?? 0)
            }
            guard let count = received else { return nil }
            if count < 0 {
                let code = currentErrno()
                if code == EINTR { continue }
                if code == EAGAIN || code == EWOULDBLOCK { return nil }
                throw SystemCallError("recvfrom", localAddress.description, code: code)
            }
            let sender = withUnsafePointer(to: &storage) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
            }
            return (Array(buffer.prefix(count)), sender)
        }
    }

    /// Waits for one datagram from the connected peer and reads it into `buffer`, which the caller
    /// keeps from one call to the next: a client's read loop then allocates nothing per datagram
    /// but the datagram itself (a fresh 64 KiB buffer and a sender address per answer were most of
    /// the receiving side's cost in an upload).
    /// - Parameters:
    ///   - buffer: where the datagram goes; its `count` is the longest datagram read whole
    ///     (longer ones are truncated). Only the first bytes, up to the returned length, are written.
    ///   - timeout: how long to wait; `nil` waits until a datagram arrives or the socket is closed.
    /// - Returns: the datagram's length, or `nil` on timeout or after ``close()``.
    /// - Throws: ``SystemCallError`` on a receive failure (e.g. `ECONNREFUSED` when the peer is
    ///   not listening).
    public func receive(into buffer: inout [UInt8], timeout: Duration?) throws(SystemCallError) -> Int? {
        let deadline = timeout.map { ContinuousClock.now + $0 }
        while true {
            let remaining = deadline.map { ContinuousClock.now.duration(to: $0) }
            if let remaining, remaining <= .zero { return nil }
            guard descriptor.waitReadable(timeout: remaining) else { return nil }
            let received: Int? = descriptor.withDescriptor { fd in
                buffer.withUnsafeMutableBytes { systemReceive(fd, $0.baseAddress, $0.count) }
            }
            guard let count = received else { return nil }
            if count >= 0 { return count }
            let code = currentErrno()
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { continue }
            throw SystemCallError("recv", localAddress.description, code: code)
        }
    }

    /// The descriptor, held open until ``releaseDescriptor()`` (for a poll over many sockets).
    package func acquireDescriptor() -> Int32? { descriptor.acquire() }

    /// Ends a hold taken with ``acquireDescriptor()``.
    package func releaseDescriptor() { descriptor.release() }

    /// Closes the socket; a blocked ``receive(timeout:maximumLength:)`` returns `nil` shortly
    /// after. Safe to call more than once.
    public func close() {
        descriptor.close()
    }

    private static func makeSocket(family: Int32) -> Int32 {
        #if canImport(Darwin)
            socket(family, SOCK_DGRAM, 0)
        #else
            socket(family, Int32(SOCK_DGRAM.rawValue), 0)
        #endif
    }

    private static func localAddress(of fd: Int32) -> SocketAddress? {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let result = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard result == 0 else { return nil }
        return withUnsafePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { SocketAddress($0, length: length) }
        }
    }
}

@inline(__always) private func systemReceive(_ fd: Int32, _ pointer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.recv(fd, pointer, count, 0)
    #elseif canImport(Musl)
        Musl.recv(fd, pointer, count, 0)
    #else
        Darwin.recv(fd, pointer, count, 0)
    #endif
}

@inline(__always) private func systemSend(_ fd: Int32, _ pointer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
        Glibc.send(fd, pointer, count, Int32(MSG_NOSIGNAL))
    #elseif canImport(Musl)
        Musl.send(fd, pointer, count, Int32(MSG_NOSIGNAL))
    #else
        Darwin.send(fd, pointer, count, 0)
    #endif
}
