// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import SMPBytes
    import SMPPOSIX

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A connected `AF_UNIX` stream socket to a bus, with file descriptors passed as `SCM_RIGHTS`.
    ///
    /// Blocking calls, made from the connection's reader thread (reads) and under a lock (writes):
    /// a bus drains its sockets quickly, and the reads never run on Swift's cooperative pool.
    /// ``shutdown()`` wakes a blocked reader; the descriptor itself is closed when the last user is
    /// done with it (when `owner` goes with this object), so its number cannot be reused under a
    /// reader.
    final class DBusSocket: Sendable {
        /// The descriptor's number, valid as long as this object lives: `owner` closes it only then.
        let fd: Int32
        private let owner: FileDescriptor
        private let isShutDown = Locked(false)
        /// Held for a whole write, so two messages never interleave on the stream.
        private let writeOrder = Locked(())

        /// The most descriptors one `recvmsg` can carry on Linux (`SCM_MAX_FD`).
        static let maximumDescriptorsPerMessage = 253

        private init(fd: Int32) {
            self.fd = fd
            owner = FileDescriptor(fd)
        }

        /// Connects to the first endpoint of an address that accepts.
        /// - Parameter address: the bus address.
        /// - Returns: the socket.
        /// - Throws: ``DBusError`` `.connectionFailed` with the last endpoint's system error.
        static func connect(to address: DBusAddress) throws(DBusError) -> DBusSocket {
            var lastError: SystemCallError?
            for endpoint in address.endpoints {
                do {
                    return try connect(to: endpoint)
                } catch {
                    lastError = error
                }
            }
            throw DBusError(.connectionFailed, "cannot connect to the bus at \(address)", cause: lastError)
        }

        private static func connect(to endpoint: DBusAddress.Endpoint) throws(SystemCallError) -> DBusSocket {
            var address = sockaddr_un()
            address.sun_family = sa_family_t(AF_UNIX)
            let (name, abstract): (String, Bool) =
                switch endpoint {
                case .path(let path): (path, false)
                case .abstract(let name): (name, true)
                }
            let bytes = (abstract ? [0] : []) + Array(name.utf8)
            let capacity = MemoryLayout.size(ofValue: address.sun_path)
            guard bytes.count < capacity else {
                throw SystemCallError("connect", name, code: ENAMETOOLONG)
            }
            withUnsafeMutableBytes(of: &address.sun_path) { raw in raw.copyBytes(from: bytes) }
            #if canImport(Darwin)
                let descriptor = socket(AF_UNIX, SOCK_STREAM, 0)
            #else
                let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
            #endif
            guard descriptor >= 0 else { throw SystemCallError("socket", name, code: errno) }
            let length = socklen_t(MemoryLayout<sa_family_t>.size + bytes.count + (abstract ? 0 : 1))
            let result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { cConnect(descriptor, $0, length) }
            }
            guard result == 0 else {
                let code = errno
                _ = systemClose(descriptor)
                throw SystemCallError("connect", abstract ? "@" + name : name, code: code)
            }
            return DBusSocket(fd: descriptor)
        }

        /// Wakes a blocked reader and refuses further writes. Safe to call more than once.
        func shutdown() {
            let first = isShutDown.withLock { isShutDown in
                defer { isShutDown = true }
                return !isShutDown
            }
            if first { _ = cShutdown(fd, Int32(SHUT_RDWR)) }
        }

        private var shutDown: Bool { isShutDown.withLock { $0 } }

        /// Writes all bytes; the descriptors travel with the first byte written.
        /// - Throws: ``DBusError`` `.disconnected` when the socket is closed or the write fails.
        func send(_ bytes: [UInt8], descriptors: [Int32] = []) throws(DBusError) {
            try writeOrder.withLock { _ throws(DBusError) in
                var offset = 0
                var pending = descriptors
                while offset < bytes.count {
                    guard !shutDown else { throw DBusError(.disconnected, "the bus connection is closed") }
                    let written = bytes.withUnsafeBytes { raw -> Int in
                        guard let base = raw.baseAddress else { return 0 }
                        return sendMessage(base + offset, raw.count - offset, descriptors: pending)
                    }
                    if written < 0 {
                        if errno == EINTR { continue }
                        let cause = SystemCallError("sendmsg", "bus", code: errno)
                        throw DBusError(.disconnected, "cannot write to the bus", cause: cause)
                    }
                    offset += written
                    pending = []
                }
            }
        }

        /// One blocking read of up to `maximumCount` bytes and the descriptors that came with them.
        /// - Returns: the bytes (empty at the end of the stream) and descriptors (owned by the caller).
        /// - Throws: ``DBusError`` `.disconnected` when the read fails.
        func receive(maximumCount: Int) throws(DBusError) -> (bytes: [UInt8], descriptors: [Int32]) {
            var buffer = [UInt8](repeating: 0, count: maximumCount)
            let controlSize = Self.controlSpace(descriptors: Self.maximumDescriptorsPerMessage)
            var control = [UInt8](repeating: 0, count: controlSize)
            while true {
                let (count, descriptors, truncated) = buffer.withUnsafeMutableBytes { data in
                    control.withUnsafeMutableBytes { control in receiveMessage(data, control) }
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    if shutDown { return ([], []) }
                    throw DBusError(
                        .disconnected,
                        "cannot read from the bus",
                        cause: SystemCallError("recvmsg", "bus", code: errno)
                    )
                }
                if truncated {
                    for descriptor in descriptors { _ = systemClose(descriptor) }
                    throw DBusError(.malformedMessage, "the bus sent more descriptors than one read can hold")
                }
                return (Array(buffer[0..<count]), descriptors)
            }
        }

        // MARK: - sendmsg / recvmsg with SCM_RIGHTS

        /// `CMSG_ALIGN`: control data is aligned to `size_t` on Linux, to 32 bits on Darwin.
        private static func controlAlign(_ length: Int) -> Int {
            #if canImport(Darwin)
                let alignment = MemoryLayout<UInt32>.size
            #else
                let alignment = MemoryLayout<Int>.size
            #endif
            return (length + alignment - 1) & ~(alignment - 1)
        }

        private static var headerSize: Int { controlAlign(MemoryLayout<cmsghdr>.size) }

        /// `CMSG_SPACE` for `descriptors` descriptors.
        static func controlSpace(descriptors: Int) -> Int {
            headerSize + controlAlign(descriptors * MemoryLayout<Int32>.size)
        }

        private func sendMessage(_ base: UnsafeRawPointer, _ count: Int, descriptors: [Int32]) -> Int {
            var iov = iovec(iov_base: UnsafeMutableRawPointer(mutating: base), iov_len: count)
            var header = msghdr()
            var control = [UInt8](
                repeating: 0,
                count: descriptors.isEmpty ? 0 : Self.controlSpace(descriptors: descriptors.count)
            )
            return withUnsafeMutablePointer(to: &iov) { iovPointer in
                header.msg_iov = iovPointer
                header.msg_iovlen = 1
                return control.withUnsafeMutableBytes { raw in
                    if !descriptors.isEmpty, let pointer = raw.baseAddress {
                        let cmsg = pointer.assumingMemoryBound(to: cmsghdr.self)
                        cmsg.pointee.cmsg_level = SOL_SOCKET
                        cmsg.pointee.cmsg_type = Int32(SCM_RIGHTS)
                        cmsg.pointee.cmsg_len = .init(Self.headerSize + descriptors.count * MemoryLayout<Int32>.size)
                        let data = pointer + Self.headerSize
                        for (index, descriptor) in descriptors.enumerated() {
                            data.storeBytes(
                                of: descriptor,
                                toByteOffset: index * MemoryLayout<Int32>.size,
                                as: Int32.self
                            )
                        }
                        header.msg_control = pointer
                        header.msg_controllen = .init(raw.count)
                    }
                    #if canImport(Darwin)
                        return cSendmsg(fd, &header, 0)
                    #else
                        return cSendmsg(fd, &header, Int32(MSG_NOSIGNAL))
                    #endif
                }
            }
        }

        private func receiveMessage(_ data: UnsafeMutableRawBufferPointer, _ control: UnsafeMutableRawBufferPointer)
            -> (Int, [Int32], Bool)
        {
            var iov = iovec(iov_base: data.baseAddress, iov_len: data.count)
            var header = msghdr()
            let count = withUnsafeMutablePointer(to: &iov) { iovPointer in
                header.msg_iov = iovPointer
                header.msg_iovlen = 1
                header.msg_control = control.baseAddress
                header.msg_controllen = .init(control.count)
                #if canImport(Darwin)
                    return cRecvmsg(fd, &header, 0)
                #else
                    return cRecvmsg(fd, &header, Int32(MSG_CMSG_CLOEXEC))
                #endif
            }
            guard count >= 0 else { return (count, [], false) }
            var descriptors: [Int32] = []
            var offset = 0
            let available = Int(header.msg_controllen)
            while let base = control.baseAddress, offset + Self.headerSize <= available {
                let cmsg = (base + offset).assumingMemoryBound(to: cmsghdr.self)
                let length = Int(cmsg.pointee.cmsg_len)
                guard length >= Self.headerSize, offset + length <= available else { break }
                if cmsg.pointee.cmsg_level == SOL_SOCKET, cmsg.pointee.cmsg_type == Int32(SCM_RIGHTS) {
                    let n = (length - Self.headerSize) / MemoryLayout<Int32>.size
                    for index in 0..<n {
                        descriptors.append(
                            (base + offset + Self.headerSize).loadUnaligned(fromByteOffset: index * 4, as: Int32.self)
                        )
                    }
                }
                offset += Self.controlAlign(length)
            }
            let truncated = header.msg_flags & Int32(MSG_CTRUNC) != 0
            return (count, descriptors, truncated)
        }
    }

    // Names of the C functions, so the methods above can use short names of their own.
    @inline(__always) private func cConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>, _ length: socklen_t)
        -> Int32
    {
        connect(fd, address, length)
    }
    @inline(__always) private func cShutdown(_ fd: Int32, _ how: Int32) -> Int32 { shutdown(fd, how) }
    @inline(__always) private func cSendmsg(_ fd: Int32, _ header: UnsafePointer<msghdr>, _ flags: Int32) -> Int {
        sendmsg(fd, header, flags)
    }
    @inline(__always) private func cRecvmsg(_ fd: Int32, _ header: UnsafeMutablePointer<msghdr>, _ flags: Int32)
        -> Int
    {
        recvmsg(fd, header, flags)
    }
#endif
