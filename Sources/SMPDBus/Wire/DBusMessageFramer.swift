// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    /// Cuts a byte stream from a bus socket into whole messages, by the lengths in their headers.
    ///
    /// Pure bookkeeping: the connection feeds what it reads and takes whole messages out. A header
    /// announcing more than the specification's 128 MiB is an error (the stream cannot be trusted
    /// after it), never an allocation.
    public struct DBusMessageFramer: Sendable {
        private var buffer: [UInt8] = []
        private var start = 0

        /// Creates an empty framer.
        public init() {}

        /// Bytes received and not yet part of a whole message.
        public var bufferedByteCount: Int { buffer.count - start }

        /// Adds bytes read from the socket.
        public mutating func append(_ bytes: some Sequence<UInt8>) {
            buffer.append(contentsOf: bytes)
        }

        /// The next whole message's bytes, or `nil` until enough have arrived.
        /// - Throws: ``DBusError`` `.malformedMessage` or `.limitExceeded` when the next header is
        ///   not a D-Bus header.
        public mutating func next() throws(DBusError) -> [UInt8]? {
            guard let length = try DBusMessage.length(ofMessageStartingWith: buffer[start...]) else { return nil }
            guard buffer.count - start >= length else { return nil }
            let message = Array(buffer[start..<(start + length)])
            start += length
            if start == buffer.count {
                buffer.removeAll(keepingCapacity: true)
                start = 0
            } else if start > 65_536 {
                buffer.removeFirst(start)
                start = 0
            }
            return message
        }
    }
#endif
