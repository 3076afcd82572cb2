// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPBytes

    extension DBusMessage {
        /// The length of the whole message whose first ``prefixLength`` bytes are given.
        /// - Parameter prefix: at least the first 16 bytes of a message.
        /// - Returns: the total length in bytes, or `nil` when fewer than 16 bytes are given.
        /// - Throws: ``DBusError`` `.malformedMessage` for an unknown byte order, `.limitExceeded`
        ///   for a message larger than 128 MiB.
        public static func length(ofMessageStartingWith prefix: some Collection<UInt8>) throws(DBusError) -> Int? {
            guard prefix.count >= prefixLength else { return nil }
            let head = Array(prefix.prefix(prefixLength))
            let endianness = try byteOrder(head[0])
            let reader = ByteReader(head)
            guard let bodyLength = reader.getInteger(at: 4, endianness: endianness, as: UInt32.self),
                let fieldsLength = reader.getInteger(at: 12, endianness: endianness, as: UInt32.self)
            else { return nil }
            guard fieldsLength <= DBusMarshaller.maximumArrayLength else {
                throw DBusError(.limitExceeded, "a \(fieldsLength)-byte header field array")
            }
            let header = (prefixLength + Int(fieldsLength) + 7) & ~7
            let total = header + Int(bodyLength)
            guard total <= maximumLength else {
                throw DBusError(.limitExceeded, "a \(total)-byte message, more than \(maximumLength)")
            }
            return total
        }

        private static func byteOrder(_ byte: UInt8) throws(DBusError) -> Endianness {
            switch byte {
            case UInt8(ascii: "l"): .little
            case UInt8(ascii: "B"): .big
            default: throw DBusError(.malformedMessage, "byte order '\(byte)' is neither 'l' nor 'B'")
            }
        }

        /// Decodes exactly one whole message.
        /// - Parameter bytes: the message, nothing more, nothing less.
        /// - Returns: the message.
        /// - Throws: ``DBusError`` `.malformedMessage` (with what and where), `.limitExceeded`, or
        ///   `.unsupported` for a message type or protocol version this implementation does not know
        ///   (the specification says to ignore such messages).
        public init(decoding bytes: [UInt8]) throws(DBusError) {
            guard let total = try Self.length(ofMessageStartingWith: bytes) else {
                throw DBusError(.malformedMessage, "\(bytes.count) bytes, shorter than a header")
            }
            guard total == bytes.count else {
                throw DBusError(.malformedMessage, "the header announces \(total) bytes, \(bytes.count) given")
            }
            let endianness = try Self.byteOrder(bytes[0])
            guard bytes[3] == 1 else { throw DBusError(.unsupported, "protocol version \(bytes[3])") }
            guard let kind = Kind(rawValue: bytes[1]) else { throw DBusError(.unsupported, "message type \(bytes[1])") }
            var reader = DBusUnmarshaller(bytes, endianness: endianness)
            try reader.moveTo(4)
            guard case .uint32(let bodyLength) = try reader.read(.uint32),
                case .uint32(let serial) = try reader.read(.uint32)
            else { throw DBusError(.malformedMessage, "no serial") }
            guard serial != 0 else { throw DBusError(.malformedMessage, "the serial is 0") }
            var fields = HeaderFields()
            guard case .array(_, let entries) = try reader.read(.array(.structure([.byte, .variant]))) else {
                throw DBusError(.malformedMessage, "no header fields")
            }
            for entry in entries { try fields.add(entry) }
            try reader.skipPadding(to: 8)
            let bodyStart = reader.readerIndex
            guard bytes.count - bodyStart == Int(bodyLength) else {
                throw DBusError(.malformedMessage, "the body is not \(bodyLength) bytes")
            }
            let signature = fields.signature ?? .empty
            if signature.types.isEmpty, bodyLength > 0 {
                throw DBusError(.malformedMessage, "a \(bodyLength)-byte body without a signature")
            }
            var bodyReader = DBusUnmarshaller(
                bytes,
                endianness: endianness,
                unixFDCount: fields.unixFDs ?? 0,
                alignmentBase: 0
            )
            try bodyReader.moveTo(bodyStart)
            let body = try bodyReader.read(signature)
            guard bodyReader.readableBytes == 0 else {
                throw DBusError(.malformedMessage, "\(bodyReader.readableBytes) bytes after the body's values")
            }
            self.init(
                kind: kind,
                flags: Flags(rawValue: bytes[2]),
                serial: serial,
                path: fields.path,
                interface: fields.interface,
                member: fields.member,
                errorName: fields.errorName,
                replySerial: fields.replySerial,
                destination: fields.destination,
                sender: fields.sender,
                unixFDCount: fields.unixFDs ?? 0,
                body: body
            )
            do {
                try validateFields()
            } catch {
                throw DBusError(.malformedMessage, error.message)
            }
        }
    }

    /// The header fields read so far: each known field once, with its own type; unknown ones
    /// ignored, as the specification requires.
    private struct HeaderFields {
        var path: DBusObjectPath?
        var interface: String?
        var member: String?
        var errorName: String?
        var replySerial: UInt32?
        var destination: String?
        var sender: String?
        var signature: DBusSignature?
        var unixFDs: UInt32?
        private var seen: Set<UInt8> = []

        mutating func add(_ entry: DBusValue) throws(DBusError) {
            guard case .structure(let parts) = entry, parts.count == 2, case .byte(let code) = parts[0],
                case .variant(let value) = parts[1]
            else { throw DBusError(.malformedMessage, "a header field is not (yv)") }
            guard let field = DBusHeaderField(rawValue: code) else { return }
            guard seen.insert(code).inserted else { throw DBusError(.malformedMessage, "header field \(code) twice") }
            switch (field, value) {
            case (.path, .objectPath(let v)): path = v
            case (.interface, .string(let v)): interface = v
            case (.member, .string(let v)): member = v
            case (.errorName, .string(let v)): errorName = v
            case (.replySerial, .uint32(let v)): replySerial = v
            case (.destination, .string(let v)): destination = v
            case (.sender, .string(let v)): sender = v
            case (.signature, .signature(let v)): signature = v
            case (.unixFDs, .uint32(let v)): unixFDs = v
            default: throw DBusError(.malformedMessage, "header field \(code) has type '\(value.type)'")
            }
        }
    }
#endif
