// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPBytes

    /// Reads D-Bus values from bytes a remote process sent, checking everything the specification
    /// requires: alignment padding is zero, booleans are 0 or 1, strings are UTF-8 without NUL and
    /// terminated by one, paths and signatures are valid, arrays end exactly on an element and stay
    /// within 64 MiB, variants hold one complete type, nesting stays within the limits, and a file
    /// descriptor index names a descriptor that came with the message.
    public struct DBusUnmarshaller: Sendable {
        private var reader: ByteReader
        /// The byte order of the message.
        public let endianness: Endianness
        /// How many file descriptors came with the message (`UNIX_FDS`).
        public let unixFDCount: UInt32
        /// Where offset 0 of the alignment grid is (the start of the message).
        private let base: Int

        /// Creates a reader.
        /// - Parameters:
        ///   - bytes: the bytes.
        ///   - endianness: their byte order.
        ///   - unixFDCount: descriptors that came with the message.
        ///   - alignmentBase: the index of the byte that is 8-aligned (0 for a whole message).
        public init(_ bytes: [UInt8], endianness: Endianness, unixFDCount: UInt32 = 0, alignmentBase: Int = 0) {
            reader = ByteReader(bytes)
            self.endianness = endianness
            self.unixFDCount = unixFDCount
            base = alignmentBase
        }

        /// The index of the next byte to read.
        public var readerIndex: Int { reader.readerIndex }
        /// Bytes left.
        public var readableBytes: Int { reader.readableBytes }

        /// Moves to a position (used by the message reader to start the body).
        mutating func moveTo(_ index: Int) throws(DBusError) {
            guard reader.moveReaderIndex(to: index) else { throw malformed("offset \(index) is past the end") }
        }

        /// Skips zero padding up to the next multiple of `alignment`.
        /// - Throws: ``DBusError`` `.malformedMessage` when a padding byte is not zero or missing.
        public mutating func skipPadding(to alignment: Int) throws(DBusError) {
            let remainder = (reader.readerIndex - base) % alignment
            guard remainder != 0 else { return }
            let count = alignment - remainder
            guard let padding = reader.readBytes(count: count) else { throw malformed("padding runs past the end") }
            guard padding.allSatisfy({ $0 == 0 }) else {
                throw malformed("non-zero padding before \(reader.readerIndex)")
            }
        }

        /// Reads values of a signature's types.
        /// - Parameter signature: the types.
        /// - Returns: the values.
        /// - Throws: ``DBusError`` `.malformedMessage` or `.limitExceeded`.
        public mutating func read(_ signature: DBusSignature) throws(DBusError) -> [DBusValue] {
            var values: [DBusValue] = []
            values.reserveCapacity(signature.types.count)
            for type in signature.types { values.append(try read(type)) }
            return values
        }

        /// Reads one value of a type.
        /// - Parameter type: the type.
        /// - Returns: the value.
        /// - Throws: ``DBusError`` as ``read(_:)-(DBusSignature)``.
        public mutating func read(_ type: DBusType) throws(DBusError) -> DBusValue {
            var depth = Depth()
            return try read(type, depth: &depth)
        }

        /// Container nesting so far: arrays and structures each at most 32, everything (variants too)
        /// at most 64.
        private struct Depth {
            var arrays = 0
            var structures = 0
            var total = 0
        }

        private mutating func read(_ type: DBusType, depth: inout Depth) throws(DBusError) -> DBusValue {
            try skipPadding(to: type.alignment)
            switch type {
            case .byte: return .byte(try integer())
            case .boolean:
                let raw: UInt32 = try integer()
                guard raw <= 1 else { throw malformed("boolean \(raw) at \(reader.readerIndex - 4)") }
                return .boolean(raw == 1)
            case .int16: return .int16(try integer())
            case .uint16: return .uint16(try integer())
            case .int32: return .int32(try integer())
            case .uint32: return .uint32(try integer())
            case .int64: return .int64(try integer())
            case .uint64: return .uint64(try integer())
            case .double: return .double(Double(bitPattern: try integer()))
            case .string: return .string(try string())
            case .objectPath:
                let text = try string()
                guard DBusNames.isObjectPath(Array(text.utf8)) else {
                    throw malformed("'\(text)' is not an object path")
                }
                return .objectPath(DBusObjectPath(unchecked: text))
            case .signature: return .signature(try signature())
            case .unixFD:
                let index: UInt32 = try integer()
                guard index < unixFDCount else {
                    throw malformed("file descriptor \(index) of \(unixFDCount) that came with the message")
                }
                return .unixFD(index)
            case .variant: return try variant(depth: &depth)
            case .array(let element): return try array(of: element, depth: &depth)
            case .dictionary(let key, let value): return try dictionary(key: key, value: value, depth: &depth)
            case .structure(let fields):
                try enter(&depth, structure: true)
                defer { leave(&depth, structure: true) }
                var values: [DBusValue] = []
                for field in fields { values.append(try read(field, depth: &depth)) }
                return .structure(values)
            }
        }

        private mutating func variant(depth: inout Depth) throws(DBusError) -> DBusValue {
            let signature = try signature()
            guard signature.types.count == 1 else {
                throw malformed("a variant's signature '\(signature)' is not one type")
            }
            depth.total += 1
            defer { depth.total -= 1 }
            guard depth.total <= 2 * DBusSignature.maximumContainerDepth else {
                throw DBusError(.limitExceeded, "values nested more than 64 deep")
            }
            // A variant's inner type may be nested within the limits given what is outside it.
            return .variant(try read(signature.types[0], depth: &depth))
        }

        private mutating func array(of element: DBusType, depth: inout Depth) throws(DBusError) -> DBusValue {
            try enter(&depth, structure: false)
            defer { leave(&depth, structure: false) }
            let end = try arrayBounds(element: element)
            if element == .byte {
                guard let bytes = reader.readBytes(count: end - reader.readerIndex) else {
                    throw malformed("short array")
                }
                return .bytes(Array(bytes))
            }
            var values: [DBusValue] = []
            while reader.readerIndex < end { values.append(try read(element, depth: &depth)) }
            guard reader.readerIndex == end else { throw malformed("an array's elements overrun its length") }
            return .array(element, values)
        }

        private mutating func dictionary(key: DBusType, value: DBusType, depth: inout Depth) throws(DBusError)
            -> DBusValue
        {
            try enter(&depth, structure: false)
            defer { leave(&depth, structure: false) }
            let end = try arrayBounds(element: .structure([]))
            try enter(&depth, structure: true)
            defer { leave(&depth, structure: true) }
            var entries: [DBusDictionaryEntry] = []
            while reader.readerIndex < end {
                try skipPadding(to: 8)
                let entryKey = try read(key, depth: &depth)
                entries.append(DBusDictionaryEntry(key: entryKey, value: try read(value, depth: &depth)))
            }
            guard reader.readerIndex == end else { throw malformed("a dictionary's entries overrun its length") }
            return .dictionary(key: key, value: value, entries)
        }

        /// Reads an array's length and the padding to its first element; returns where it ends.
        private mutating func arrayBounds(element: DBusType) throws(DBusError) -> Int {
            let length: UInt32 = try integer()
            guard length <= DBusMarshaller.maximumArrayLength else {
                throw DBusError(
                    .limitExceeded,
                    "a \(length)-byte array, more than \(DBusMarshaller.maximumArrayLength)"
                )
            }
            try skipPadding(to: element.alignment)
            let end = reader.readerIndex + Int(length)
            guard end <= reader.bytes.count else { throw malformed("a \(length)-byte array runs past the end") }
            if let size = element.fixedSize, Int(length) % size != 0 {
                throw malformed("a \(length)-byte array of \(size)-byte elements")
            }
            return end
        }

        private mutating func enter(_ depth: inout Depth, structure: Bool) throws(DBusError) {
            if structure { depth.structures += 1 } else { depth.arrays += 1 }
            depth.total += 1
            guard depth.arrays <= DBusSignature.maximumContainerDepth,
                depth.structures <= DBusSignature.maximumContainerDepth,
                depth.total <= 2 * DBusSignature.maximumContainerDepth
            else { throw DBusError(.limitExceeded, "values nested deeper than the specification allows") }
        }

        private func leave(_ depth: inout Depth, structure: Bool) {
            if structure { depth.structures -= 1 } else { depth.arrays -= 1 }
            depth.total -= 1
        }

        private mutating func integer<T: FixedWidthInteger>() throws(DBusError) -> T {
            guard let value = reader.readInteger(endianness: endianness, as: T.self) else {
                throw malformed("a \(MemoryLayout<T>.size)-byte value runs past the end")
            }
            return value
        }

        private mutating func string() throws(DBusError) -> String {
            let length: UInt32 = try integer()
            guard Int(length) < reader.readableBytes, let bytes = reader.readBytes(count: Int(length)) else {
                throw malformed("a \(length)-byte string runs past the end")
            }
            guard reader.readByte() == 0 else { throw malformed("a string is not NUL-terminated") }
            guard !bytes.contains(0) else { throw malformed("a string holds a NUL byte") }
            // Decoding replaces invalid sequences, so a changed byte count or content means not UTF-8.
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.utf8.elementsEqual(bytes) else { throw malformed("a string is not UTF-8") }
            return text
        }

        private mutating func signature() throws(DBusError) -> DBusSignature {
            guard let length = reader.readByte(), let bytes = reader.readBytes(count: Int(length)) else {
                throw malformed("a signature runs past the end")
            }
            guard reader.readByte() == 0 else { throw malformed("a signature is not NUL-terminated") }
            guard bytes.allSatisfy({ $0 > 0 && $0 < 128 }) else { throw malformed("a signature holds non-ASCII bytes") }
            do {
                return try DBusSignature(String(decoding: bytes, as: UTF8.self))
            } catch {
                throw DBusError(.malformedMessage, error.message)
            }
        }

        private func malformed(_ what: String) -> DBusError {
            DBusError(.malformedMessage, what)
        }
    }
#endif
