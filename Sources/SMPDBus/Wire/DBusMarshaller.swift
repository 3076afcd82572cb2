// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPBytes

    /// Writes D-Bus values in the specification's wire format: each value aligned to its type's
    /// boundary (relative to the start of the buffer, which is the start of the message or of its
    /// 8-aligned body), zero padding, the byte order chosen per message.
    public struct DBusMarshaller: Sendable {
        /// The largest array the specification allows, in bytes (64 MiB).
        public static let maximumArrayLength = 1 << 26

        /// The bytes written so far.
        public private(set) var writer: ByteWriter
        /// The byte order.
        public let endianness: Endianness
        /// One more than the largest file-descriptor index written (the message's `UNIX_FDS`).
        public private(set) var unixFDsNeeded: UInt32 = 0

        /// Creates an empty buffer.
        /// - Parameter endianness: the byte order of every integer written.
        public init(endianness: Endianness = .little) {
            writer = ByteWriter(capacity: 64)
            self.endianness = endianness
        }

        /// The bytes written.
        public var bytes: [UInt8] { writer.bytes }

        /// Writes zero bytes up to the next multiple of `alignment`.
        public mutating func pad(to alignment: Int) {
            let remainder = writer.writerIndex % alignment
            if remainder != 0 {
                _ = writer.writeBytes(repeatElement(UInt8(0), count: alignment - remainder))
            }
        }

        /// Appends bytes as they are (an already marshalled body).
        mutating func append(_ bytes: [UInt8]) {
            _ = writer.writeBytes(bytes)
        }

        /// Overwrites a 32-bit integer written earlier (a length known only afterwards).
        mutating func setUInt32(_ value: UInt32, at index: Int) {
            _ = writer.setInteger(value, at: index, endianness: endianness)
        }

        /// Writes values in the order of a signature's types.
        /// - Parameters:
        ///   - values: the values.
        ///   - signature: their types.
        /// - Throws: ``DBusError`` `.typeMismatch` when a value does not have its type, `.invalidName`
        ///   or `.limitExceeded` when a value breaks the specification.
        public mutating func write(_ values: [DBusValue], signature: DBusSignature) throws(DBusError) {
            guard values.count == signature.types.count else {
                throw DBusError(.typeMismatch, "\(values.count) values for signature '\(signature)'")
            }
            for (value, type) in zip(values, signature.types) { try write(value, as: type, depth: 0) }
        }

        /// Writes one value of a type.
        /// - Parameters:
        ///   - value: the value.
        ///   - type: the type it must have.
        /// - Throws: ``DBusError`` as ``write(_:signature:)``.
        public mutating func write(_ value: DBusValue, as type: DBusType) throws(DBusError) {
            try write(value, as: type, depth: 0)
        }

        private mutating func write(_ value: DBusValue, as type: DBusType, depth: Int) throws(DBusError) {
            guard depth <= 2 * DBusSignature.maximumContainerDepth else {
                throw DBusError(.limitExceeded, "values nested more than 64 deep")
            }
            pad(to: type.alignment)
            switch (value, type) {
            case (.byte(let v), .byte): _ = writer.writeByte(v)
            case (.boolean(let v), .boolean): _ = writer.writeInteger(UInt32(v ? 1 : 0), endianness: endianness)
            case (.int16(let v), .int16): _ = writer.writeInteger(v, endianness: endianness)
            case (.uint16(let v), .uint16): _ = writer.writeInteger(v, endianness: endianness)
            case (.int32(let v), .int32): _ = writer.writeInteger(v, endianness: endianness)
            case (.uint32(let v), .uint32): _ = writer.writeInteger(v, endianness: endianness)
            case (.int64(let v), .int64): _ = writer.writeInteger(v, endianness: endianness)
            case (.uint64(let v), .uint64): _ = writer.writeInteger(v, endianness: endianness)
            case (.double(let v), .double): _ = writer.writeInteger(v.bitPattern, endianness: endianness)
            case (.string(let text), .string): try writeString(text)
            case (.objectPath(let path), .objectPath): try writeString(path.rawValue)
            case (.signature(let signature), .signature): writeSignature(signature.rawValue)
            case (.unixFD(let index), .unixFD):
                _ = writer.writeInteger(index, endianness: endianness)
                unixFDsNeeded = max(unixFDsNeeded, index &+ 1)
            case (.variant(let inner), .variant):
                // A variant's type must itself be a valid signature (length and nesting limits).
                let signature = inner.type.description
                _ = try DBusSignature.singleType(signature)
                writeSignature(signature)
                try write(inner, as: inner.type, depth: depth + 1)
            default:
                try writeContainer(value, as: type, depth: depth)
            }
        }

        private mutating func writeContainer(_ value: DBusValue, as type: DBusType, depth: Int) throws(DBusError) {
            switch (value, type) {
            case (.bytes(let bytes), .array(.byte)):
                guard bytes.count <= Self.maximumArrayLength else { throw tooLong(bytes.count) }
                _ = writer.writeInteger(UInt32(bytes.count), endianness: endianness)
                _ = writer.writeBytes(bytes)
            case (.array(let element, let elements), .array(let expected)) where element == expected:
                try writeArray(element: element, count: elements.count, depth: depth) { (m, i) throws(DBusError) in
                    try m.write(elements[i], as: element, depth: depth + 1)
                }
            case (.dictionary(let key, let valueType, let entries), .dictionary(let expectedKey, let expectedValue))
            where key == expectedKey && valueType == expectedValue:
                try writeArray(element: .structure([]), count: entries.count, depth: depth) {
                    (m, i) throws(DBusError) in
                    m.pad(to: 8)
                    try m.write(entries[i].key, as: key, depth: depth + 2)
                    try m.write(entries[i].value, as: valueType, depth: depth + 2)
                }
            case (.structure(let fields), .structure(let types)) where fields.count == types.count:
                for (field, fieldType) in zip(fields, types) { try write(field, as: fieldType, depth: depth + 1) }
            default:
                throw DBusError(.typeMismatch, "a value of type '\(value.type)' where '\(type)' is expected")
            }
        }

        /// Length, padding to the element's alignment (not counted), elements, then the length.
        private mutating func writeArray(
            element: DBusType,
            count: Int,
            depth: Int,
            _ writeElement: (inout DBusMarshaller, Int) throws(DBusError) -> Void
        ) throws(DBusError) {
            let lengthAt = writer.writerIndex
            _ = writer.writeInteger(UInt32(0), endianness: endianness)
            pad(to: element.alignment)
            let start = writer.writerIndex
            for index in 0..<count { try writeElement(&self, index) }
            let length = writer.writerIndex - start
            guard length <= Self.maximumArrayLength else { throw tooLong(length) }
            _ = writer.setInteger(UInt32(length), at: lengthAt, endianness: endianness)
        }

        private mutating func writeString(_ text: String) throws(DBusError) {
            let utf8 = Array(text.utf8)
            guard !utf8.contains(0) else { throw DBusError(.typeMismatch, "a string holds a NUL byte") }
            _ = writer.writeInteger(UInt32(utf8.count), endianness: endianness)
            _ = writer.writeBytes(utf8)
            _ = writer.writeByte(0)
        }

        private mutating func writeSignature(_ text: String) {
            // Signatures are validated when made, so they are at most 255 ASCII bytes.
            let utf8 = Array(text.utf8)
            _ = writer.writeByte(UInt8(truncatingIfNeeded: utf8.count))
            _ = writer.writeBytes(utf8)
            _ = writer.writeByte(0)
        }

        private func tooLong(_ length: Int) -> DBusError {
            DBusError(.limitExceeded, "a \(length)-byte array, more than \(Self.maximumArrayLength)")
        }
    }
#endif
