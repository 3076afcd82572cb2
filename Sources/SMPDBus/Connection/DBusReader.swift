// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPPOSIX

    /// Reads whole messages and their descriptors from a socket (on the connection's reader thread).
    ///
    /// Descriptors arrive with some byte of the message that carries them; they are queued in
    /// arrival order and each message takes as many as its `UNIX_FDS` says, as libdbus does. A
    /// message that claims more than arrived is malformed: the stream is then out of step and the
    /// connection closes.
    ///
    /// The state of the connection's read loop, so only the loop's thread has it; the loop calls
    /// ``closeUnclaimedDescriptors()`` when it ends.
    struct DBusReader: Sendable {
        private let socket: DBusSocket
        private var framer = DBusMessageFramer()
        private var descriptors: [Int32] = []

        init(socket: DBusSocket, leftover: [UInt8]) {
            self.socket = socket
            framer.append(leftover)
        }

        /// Closes the descriptors that arrived without a message to take them yet (the reader is
        /// done: a peer cannot make us leak them).
        mutating func closeUnclaimedDescriptors() {
            for descriptor in descriptors { _ = systemClose(descriptor) }
            descriptors = []
        }

        /// The next message, `nil` at the end of the stream.
        /// - Throws: ``DBusError`` when the bytes are not D-Bus or the socket fails.
        mutating func next() throws(DBusError) -> DBusReceivedMessage? {
            while true {
                if let bytes = try framer.next() {
                    let message: DBusMessage
                    do {
                        message = try DBusMessage(decoding: bytes)
                    } catch  where error.code == .unsupported {
                        // The specification: ignore messages of unknown type or version.
                        continue
                    }
                    let count = Int(message.unixFDCount)
                    guard count <= descriptors.count else {
                        throw DBusError(
                            .malformedMessage,
                            "a message names \(count) descriptors, \(descriptors.count) arrived"
                        )
                    }
                    let own = Array(descriptors.prefix(count))
                    descriptors.removeFirst(count)
                    return DBusReceivedMessage(message: message, descriptors: DBusFileDescriptors(own))
                }
                let (bytes, received) = try socket.receive(maximumCount: 65_536)
                descriptors += received
                guard !bytes.isEmpty else { return nil }
                framer.append(bytes)
            }
        }
    }
#endif
