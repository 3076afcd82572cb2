// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import SMPPOSIX

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A socket BlueZ hands out with `AcquireWrite` or `AcquireNotify`: a `SOCK_SEQPACKET` whose
    /// every write is one ATT write without response and every read one notification.
    ///
    /// Writes are non-blocking (a full socket is back-pressure, as a full controller buffer is);
    /// reads happen on a thread of their own. ``close()`` makes a blocked reader return within one
    /// poll slice; the descriptor is closed once no call uses it.
    final class BlueZSocket: Sendable {
        private let descriptor: FileDescriptor

        /// The longest single poll, so a closed socket is noticed quickly.
        static let pollSlice: Int32 = FileDescriptor.pollSlice

        /// Takes ownership of a descriptor and makes it non-blocking.
        init(_ descriptor: Int32) {
            let flags = fcntl(descriptor, F_GETFL)
            _ = fcntl(descriptor, F_SETFL, flags | O_NONBLOCK)
            self.descriptor = FileDescriptor(descriptor)
        }

        private func use<T>(_ body: (Int32) -> T) -> T? {
            descriptor.withDescriptor(body)
        }

        /// Whether ``close()`` was called.
        var isClosed: Bool { descriptor.closed }

        /// Closes the socket (at once, or when the last call using it returns).
        func close() {
            descriptor.close()
        }

        /// The outcome of one write.
        enum WriteResult: Equatable {
            case written, full, gone
        }

        /// Writes one value without waiting.
        func write(_ value: [UInt8]) -> WriteResult {
            use { fd -> WriteResult in
                while true {
                    #if canImport(Darwin)
                        let count = value.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
                    #else
                        let count = value.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    #endif
                    if count >= 0 { return .written }
                    if errno == EINTR { continue }
                    return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS ? .full : .gone
                }
            } ?? .gone
        }

        /// Blocks (for one poll slice at most) until the socket takes a write or has something to
        /// read. Returns `false` once the socket is closed or hung up.
        func poll(forWriting: Bool) -> Bool? {
            use { fd -> Bool? in
                var entry = pollfd(fd: fd, events: Int16(forWriting ? POLLOUT : POLLIN), revents: 0)
                let result = cPoll(&entry, 1, Self.pollSlice)
                if result < 0 { return errno == EINTR ? nil : false }
                if result == 0 { return nil }
                if entry.revents & Int16(POLLIN | POLLOUT) != 0 { return true }
                return false
            } ?? false
        }

        /// Reads one packet without waiting: bytes, `[]` for nothing yet, `nil` at the end.
        func read(maximumCount: Int) -> [UInt8]? {
            use { fd -> [UInt8]? in
                var buffer = [UInt8](repeating: 0, count: maximumCount)
                while true {
                    let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                    if count > 0 { return Array(buffer[0..<count]) }
                    if count == 0 { return nil }
                    if errno == EINTR { continue }
                    return errno == EAGAIN || errno == EWOULDBLOCK ? [] : nil
                }
            } ?? nil
        }
    }

    @inline(__always) private func cPoll(_ entry: UnsafeMutablePointer<pollfd>, _ count: Int, _ timeout: Int32) -> Int32
    {
        poll(entry, nfds_t(count), timeout)
    }
#endif
