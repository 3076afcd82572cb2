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

    /// Runs the SASL handshake (``DBusAuthentication``) over a socket on a thread of its own.
    enum DBusHandshake {
        struct Result: Sendable {
            var unixFDs: Bool
            var guid: String
            /// Bytes read past the last line (none with a conforming bus, kept all the same).
            var leftover: [UInt8]
        }

        static func run(on socket: DBusSocket, timeout: Duration) async throws -> Result {
            try await withCheckedThrowingContinuation { continuation in
                // One pass: the handshake's blocking reads and writes, off the cooperative pool.
                BlockingReadLoop.start(name: "mcumgr.dbus.auth") {
                    do {
                        continuation.resume(returning: try blocking(socket, timeout: timeout))
                    } catch {
                        socket.shutdown()
                        continuation.resume(throwing: error)
                    }
                    return false
                }
            }
        }

        /// The error for a bus that goes away mid-handshake, whether a read (end of stream, or a reset
        /// when our bytes were left unread) or a write notices it.
        private static func closedDuringAuthentication(cause: DBusError?) -> DBusError {
            DBusError(
                .authenticationFailed,
                "the bus closed the connection during authentication (dbus-daemon closes a connection "
                    + "that has not authenticated within its auth_timeout)",
                cause: cause
            )
        }

        private static func send(_ bytes: [UInt8], on socket: DBusSocket) throws(DBusError) {
            do {
                try socket.send(bytes)
            } catch {
                throw error.code == .disconnected ? closedDuringAuthentication(cause: error) : error
            }
        }

        private static func receive(on socket: DBusSocket) throws(DBusError) -> (bytes: [UInt8], descriptors: [Int32]) {
            do {
                return try socket.receive(maximumCount: 4096)
            } catch {
                throw error.code == .disconnected ? closedDuringAuthentication(cause: error) : error
            }
        }

        private static func blocking(_ socket: DBusSocket, timeout: Duration) throws(DBusError) -> Result {
            var auth = DBusAuthentication(uid: UInt32(getuid()), negotiateUnixFDs: true)
            try send(auth.initialBytes, on: socket)
            let deadline = ContinuousClock.now + timeout
            var buffer: [UInt8] = []
            while true {
                guard let end = buffer.firstRange(of: [13, 10]) else {
                    guard buffer.count <= DBusAuthentication.maximumLineLength else {
                        throw DBusError(.authenticationFailed, "the bus sent a line longer than 16 KiB")
                    }
                    guard socket.waitReadable(until: deadline) else {
                        throw DBusError(.timeout, "the bus did not answer the authentication within \(timeout)")
                    }
                    let (bytes, descriptors) = try receive(on: socket)
                    for descriptor in descriptors { _ = systemClose(descriptor) }
                    guard !bytes.isEmpty else { throw closedDuringAuthentication(cause: nil) }
                    buffer += bytes
                    continue
                }
                let line = String(decoding: buffer[..<end.lowerBound], as: UTF8.self)
                buffer.removeSubrange(..<end.upperBound)
                switch try auth.receive(line: line) {
                case .send(let bytes):
                    try send(bytes, on: socket)
                case .authenticated(let bytes, let guid, let unixFDs):
                    try send(bytes, on: socket)
                    return Result(unixFDs: unixFDs, guid: guid, leftover: buffer)
                }
            }
        }
    }

    extension DBusSocket {
        /// Waits until the socket has something to read, or the deadline passes.
        func waitReadable(until deadline: ContinuousClock.Instant) -> Bool {
            while true {
                let remaining = ContinuousClock.now.duration(to: deadline)
                guard remaining > .zero else { return false }
                let milliseconds = Int32(clamping: remaining.components.seconds * 1000 + 1)
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let result = poll(&descriptor, 1, min(milliseconds, 1000))
                if result > 0 { return true }
                if result < 0 && errno != EINTR { return true }
            }
        }
    }
#endif
