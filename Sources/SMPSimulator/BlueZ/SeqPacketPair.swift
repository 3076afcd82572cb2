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

    /// A connected `AF_UNIX` `SOCK_SEQPACKET` pair, as BlueZ hands to `AcquireWrite` and
    /// `AcquireNotify` callers: one end goes to BlueZ (and on to the central), we keep the other.
    /// Every write is one ATT value, every read one.
    final class SeqPacketEnd: Sendable {
        private let descriptor: FileDescriptor

        private init(_ descriptor: Int32) { self.descriptor = FileDescriptor(descriptor) }

        /// A new pair: our end, and the descriptor to hand out (the caller passes and closes it).
        static func make() -> (ours: SeqPacketEnd, theirs: Int32)? {
            var ends: [Int32] = [-1, -1]
            #if canImport(Darwin)
                let type = SOCK_SEQPACKET
            #else
                let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
            #endif
            guard socketpair(AF_UNIX, type, 0, &ends) == 0 else { return nil }
            return (SeqPacketEnd(ends[0]), ends[1])
        }

        private func use<T>(_ body: (Int32) -> T) -> T? {
            descriptor.withDescriptor(body)
        }

        /// Closes our end (the other side then reads the end of the stream).
        func close() {
            descriptor.close()
        }

        /// Sends one packet, waiting (in 50 ms polls) while the socket is full.
        /// - Returns: `false` when the other side is gone.
        func send(_ value: [UInt8]) -> Bool {
            while true {
                let outcome = use { fd -> Int in
                    #if canImport(Darwin)
                        let count = value.withUnsafeBytes { Darwin.send(fd, $0.baseAddress, $0.count, MSG_DONTWAIT) }
                    #else
                        let flags = Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL)
                        let count = value.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, flags) }
                    #endif
                    if count >= 0 { return 1 }
                    if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ENOBUFS {
                        var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&entry, 1, 50)
                        return 0
                    }
                    return -1
                }
                switch outcome {
                case 1?: return true
                case 0?: continue
                default: return false
                }
            }
        }

        /// Waits up to 50 ms for a packet: bytes, `[]` for none yet, `nil` at the end.
        func receive(maximumCount: Int) -> [UInt8]? {
            use { fd -> [UInt8]? in
                var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&entry, 1, 50)
                if ready == 0 || (ready < 0 && errno == EINTR) { return [] }
                var buffer = [UInt8](repeating: 0, count: maximumCount)
                let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count > 0 { return Array(buffer[0..<count]) }
                if count < 0 && (errno == EAGAIN || errno == EINTR) { return [] }
                return nil
            } ?? nil
        }
    }
#endif
