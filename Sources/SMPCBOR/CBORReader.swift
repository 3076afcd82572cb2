import Foundation
import SMPBytes

/// Decodes CBOR items from bytes, strictly and without trusting declared lengths.
///
/// Accepts everything RFC 8949 calls well-formed: definite and indefinite lengths (Zephyr's
/// zcbor sends indefinite maps), tags, simple values, and half, single and double floats.
/// Rejects what is not, with the byte offset: truncation, reserved additional information,
/// stray breaks, invalid UTF-8, and nesting beyond ``Limits/maximumDepth``. A declared length
/// is checked against the bytes that remain before anything is allocated for it.
public struct CBORReader: Sendable {
    /// Bounds that protect the reader from hostile input.
    public struct Limits: Sendable, Hashable {
        /// Deepest nesting of arrays, maps and tags accepted.
        public var maximumDepth: Int
        /// Whether a map with the same key twice is an error (RFC 8949 §5.6 calls such maps
        /// invalid). When off, both entries are kept and lookups find the first.
        public var rejectDuplicateKeys: Bool

        /// Creates limits.
        /// - Parameters:
        ///   - maximumDepth: deepest nesting accepted; 64 is far beyond any SMP message.
        ///   - rejectDuplicateKeys: whether duplicate map keys are an error.
        public init(maximumDepth: Int = 64, rejectDuplicateKeys: Bool = true) {
            self.maximumDepth = maximumDepth
            self.rejectDuplicateKeys = rejectDuplicateKeys
        }
    }

    private var reader: ByteReader
    private let limits: Limits
    /// Where the CBOR starts in the underlying bytes; offsets are reported relative to it.
    private let base: Int

    /// Creates a reader over bytes.
    /// - Parameters:
    ///   - bytes: the encoded items.
    ///   - limits: bounds for hostile input.
    public init(_ bytes: some Sequence<UInt8>, limits: Limits = Limits()) {
        reader = ByteReader(bytes)
        self.limits = limits
        base = 0
    }

    /// Creates a reader over an array without copying it.
    /// - Parameters:
    ///   - bytes: the encoded items.
    ///   - limits: bounds for hostile input.
    public init(_ bytes: [UInt8], limits: Limits = Limits()) {
        self.init(bytes, startingAt: 0, limits: limits)
    }

    /// Creates a reader over the tail of an array without copying it (an SMP frame's payload
    /// after its header). Offsets in errors count from `start`.
    /// - Parameters:
    ///   - bytes: the array.
    ///   - start: where the CBOR begins.
    ///   - limits: bounds for hostile input.
    public init(_ bytes: [UInt8], startingAt start: Int, limits: Limits = Limits()) {
        reader = ByteReader(bytes)
        reader.moveReaderIndex(to: min(max(0, start), bytes.count))
        self.limits = limits
        base = min(max(0, start), bytes.count)
    }

    /// Offset of the next byte to be read.
    public var offset: Int { reader.readerIndex - base }

    /// Bytes not yet read.
    var remainingByteCount: Int { reader.readableBytes }
    func peekInitialByte() -> UInt8? { reader.peekByte() }
    mutating func readInitialByte() -> UInt8? { reader.readByte() }
    mutating func skipBytes(_ count: Int) { reader.moveReaderIndex(forwardBy: count) }
    mutating func readRawBytesIfAvailable(_ count: Int) -> ArraySlice<UInt8>? { reader.readBytes(count: count) }

    /// The next item's argument if it is in major type `major` with a definite argument, read
    /// big-endian straight from the buffer; consumes the head. `nil` (consuming nothing) otherwise.
    mutating func readDefiniteArgument(major: UInt8) -> UInt64? {
        guard let initial = reader.peekByte(), initial >> 5 == major else { return nil }
        let info = initial & 0x1f
        switch info {
        case 0..<24:
            reader.moveReaderIndex(forwardBy: 1)
            return UInt64(info)
        case 24:
            return reader.getInteger(at: reader.readerIndex + 1, endianness: .big, as: UInt8.self).map {
                consumeHead(1, UInt64($0))
            }
        case 25:
            return reader.getInteger(at: reader.readerIndex + 1, endianness: .big, as: UInt16.self).map {
                consumeHead(2, UInt64($0))
            }
        case 26:
            return reader.getInteger(at: reader.readerIndex + 1, endianness: .big, as: UInt32.self).map {
                consumeHead(4, UInt64($0))
            }
        case 27:
            return reader.getInteger(at: reader.readerIndex + 1, endianness: .big, as: UInt64.self).map {
                consumeHead(8, $0)
            }
        default: return nil
        }
    }

    private mutating func consumeHead(_ size: Int, _ value: UInt64) -> UInt64 {
        reader.moveReaderIndex(forwardBy: 1 + size)
        return value
    }

    /// A short definite text string (at most 8 bytes) at the reader position, packed big-endian
    /// into an integer with its length, without consuming it; `nil` for anything else.
    func peekPackedShortText() -> (length: Int, value: UInt64)? {
        guard let initial = reader.peekByte(), initial >> 5 == 3 else { return nil }
        let length = Int(initial & 0x1f)
        guard length <= 8, reader.readableBytes > length else { return nil }
        let start = reader.readerIndex + 1
        var value: UInt64 = 0
        for index in start..<start + length { value = value << 8 | UInt64(reader.bytes[index]) }
        return (length, value)
    }

    /// Whether every byte has been consumed.
    public var isAtEnd: Bool { reader.readableBytes == 0 }

    /// Decodes exactly one item that spans all of `bytes`.
    /// - Parameters:
    ///   - bytes: the encoding.
    ///   - limits: bounds for hostile input.
    /// - Returns: the item.
    /// - Throws: ``CBORError`` if the bytes are not one well-formed item (``CBORError/Code/trailingBytes``
    ///   if more follow it).
    public static func decode(_ bytes: some Sequence<UInt8>, limits: Limits = Limits()) throws(CBORError) -> CBOR {
        var reader = CBORReader(Array(bytes), limits: limits)
        let value = try reader.readValue()
        guard reader.isAtEnd else { throw CBORError(.trailingBytes, at: reader.offset) }
        return value
    }

    /// Reads the next item.
    /// - Returns: the item.
    /// - Throws: ``CBORError`` with the offset of the first problem; the reader's position is then
    ///   unspecified.
    public mutating func readValue() throws(CBORError) -> CBOR {
        try readItem(depth: 0)
    }

    // MARK: - Heads

    private enum Head {
        case argument(major: UInt8, value: UInt64)
        case indefinite(major: UInt8)
        case breakStop
        case float(CBORFloat)
    }

    private mutating func readHead() throws(CBORError) -> Head {
        let start = offset
        guard let initial = reader.readByte() else { throw CBORError(.truncated, at: start) }
        let major = initial >> 5
        let info = initial & 0x1f
        switch info {
        case 0..<24:
            return .argument(major: major, value: UInt64(info))
        case 24:
            guard let v = reader.readInteger(endianness: .big, as: UInt8.self) else {
                throw CBORError(.truncated, at: start)
            }
            return .argument(major: major, value: UInt64(v))
        case 25:
            guard let v = reader.readInteger(endianness: .big, as: UInt16.self) else {
                throw CBORError(.truncated, at: start)
            }
            if major == 7 { return .float(CBORFloat(HalfFloat.double(fromBits: v), width: .half)) }
            return .argument(major: major, value: UInt64(v))
        case 26:
            guard let v = reader.readInteger(endianness: .big, as: UInt32.self) else {
                throw CBORError(.truncated, at: start)
            }
            if major == 7 { return .float(CBORFloat(Double(Float(bitPattern: v)), width: .single)) }
            return .argument(major: major, value: UInt64(v))
        case 27:
            guard let v = reader.readInteger(endianness: .big, as: UInt64.self) else {
                throw CBORError(.truncated, at: start)
            }
            if major == 7 { return .float(CBORFloat(Double(bitPattern: v), width: .double)) }
            return .argument(major: major, value: v)
        case 31:
            switch major {
            case 2, 3, 4, 5: return .indefinite(major: major)
            case 7: return .breakStop
            default: throw CBORError(.reservedAdditionalInfo, at: start)
            }
        default:  // 28, 29, 30
            throw CBORError(.reservedAdditionalInfo, at: start)
        }
    }

    // MARK: - Items

    private mutating func readItem(depth: Int) throws(CBORError) -> CBOR {
        let start = offset
        switch try readHead() {
        case .breakStop:
            throw CBORError(.unexpectedBreak, at: start)
        case .float(let f):
            return .float(f)
        case .indefinite(let major):
            return try readIndefinite(major: major, depth: depth, start: start)
        case .argument(let major, let value):
            switch major {
            case 0: return .unsignedInt(value)
            case 1: return .negativeInt(value)
            case 2: return .byteString(dataCopy(try readBytes(length: value, start: start)))
            case 3: return .textString(try readText(length: value, start: start))
            case 4:
                try checkDepth(depth, start: start)
                // Every element takes at least one byte: a count above what remains is a lie.
                let count = try checkedCount(value, bytesPerElement: 1, start: start)
                var elements: [CBOR] = []
                elements.reserveCapacity(count)
                for _ in 0..<count { elements.append(try readItem(depth: depth + 1)) }
                return .array(elements)
            case 5:
                try checkDepth(depth, start: start)
                let count = try checkedCount(value, bytesPerElement: 2, start: start)
                var map = CBORMap()
                map.entries.reserveCapacity(count)
                var keys = KeySet()
                for _ in 0..<count {
                    let keyOffset = offset
                    let key = try readItem(depth: depth + 1)
                    try insert(key, into: &keys, of: map, at: keyOffset)
                    map.append(key: key, value: try readItem(depth: depth + 1))
                }
                return .map(map)
            case 6:
                try checkDepth(depth, start: start)
                return .tagged(value, try readItem(depth: depth + 1))
            default:  // 7
                switch value {
                case 20: return .boolean(false)
                case 21: return .boolean(true)
                case 22: return .null
                case 23: return .undefined
                default:
                    // One-byte form (info < 24) gives 0...19; the two-byte form must be ≥ 32.
                    if offset - start == 2 && value < 32 { throw CBORError(.invalidSimpleValue, at: start) }
                    return .simple(UInt8(value))
                }
            }
        }
    }

    private mutating func readIndefinite(major: UInt8, depth: Int, start: Int) throws(CBORError) -> CBOR {
        switch major {
        case 2, 3:
            var collected: [UInt8] = []
            while true {
                let chunkStart = offset
                switch try readHead() {
                case .breakStop:
                    if major == 2 { return .byteString(Data(collected)) }
                    guard let text = validUTF8String(collected) else {
                        throw CBORError(.invalidUTF8, at: start)
                    }
                    return .textString(text)
                case .argument(let chunkMajor, let length) where chunkMajor == major:
                    let chunk = try readBytes(length: length, start: chunkStart)
                    // Each text chunk must be valid UTF-8 on its own (RFC 8949 §3.2.3).
                    if major == 3 && validUTF8String(chunk) == nil {
                        throw CBORError(.invalidUTF8, at: chunkStart)
                    }
                    collected.append(contentsOf: chunk)
                default:
                    throw CBORError(.invalidIndefiniteChunk, at: chunkStart)
                }
            }
        case 4:
            try checkDepth(depth, start: start)
            var elements: [CBOR] = []
            while !(try consumeBreak()) { elements.append(try readItem(depth: depth + 1)) }
            return .array(elements)
        default:  // 5
            try checkDepth(depth, start: start)
            var map = CBORMap()
            var keys = KeySet()
            while !(try consumeBreak()) {
                let keyOffset = offset
                let key = try readItem(depth: depth + 1)
                try insert(key, into: &keys, of: map, at: keyOffset)
                if reader.peekByte() == 0xff { throw CBORError(.unexpectedBreak, at: offset) }
                map.append(key: key, value: try readItem(depth: depth + 1))
            }
            return .map(map)
        }
    }

    // MARK: - Helpers

    /// Consumes a break byte if one is next; a missing byte means the item was cut short.
    private mutating func consumeBreak() throws(CBORError) -> Bool {
        guard let next = reader.peekByte() else { throw CBORError(.truncated, at: offset) }
        guard next == 0xff else { return false }
        reader.moveReaderIndex(forwardBy: 1)
        return true
    }

    private func checkDepth(_ depth: Int, start: Int) throws(CBORError) {
        if depth >= limits.maximumDepth { throw CBORError(.nestingTooDeep, at: start) }
    }

    private func checkedCount(_ declared: UInt64, bytesPerElement: UInt64, start: Int) throws(CBORError) -> Int {
        let remaining = UInt64(reader.readableBytes)
        guard declared <= remaining / bytesPerElement else { throw CBORError(.lengthExceedsInput, at: start) }
        return Int(declared)
    }

    private mutating func readBytes(length: UInt64, start: Int) throws(CBORError) -> ArraySlice<UInt8> {
        guard length <= UInt64(reader.readableBytes) else { throw CBORError(.lengthExceedsInput, at: start) }
        guard let bytes = reader.readBytes(count: Int(length)) else { throw CBORError(.truncated, at: start) }
        return bytes
    }

    private mutating func readText(length: UInt64, start: Int) throws(CBORError) -> String {
        let bytes = try readBytes(length: length, start: start)
        guard let text = validUTF8String(bytes) else { throw CBORError(.invalidUTF8, at: start) }
        return text
    }

    /// Tracks keys seen in one map; a set only once the map is big enough for linear search to hurt.
    private struct KeySet {
        var set: Set<CBOR>?
    }

    private func insert(_ key: CBOR, into keys: inout KeySet, of map: CBORMap, at offset: Int) throws(CBORError) {
        guard limits.rejectDuplicateKeys else { return }
        if keys.set == nil && map.count >= 16 { keys.set = Set(map.entries.map(\.key)) }
        if keys.set != nil {
            guard keys.set?.insert(key).inserted == true else { throw CBORError(.duplicateMapKey, at: offset) }
        } else if map.entries.contains(where: { $0.key == key }) {
            throw CBORError(.duplicateMapKey, at: offset)
        }
    }
}

/// The text in `bytes` if they are valid UTF-8, else `nil`.
///
/// `String(validating:as:)` needs macOS 15, so validate by decoding (which repairs invalid
/// sequences with U+FFFD) and checking that nothing was repaired.
func validUTF8String(_ bytes: some Collection<UInt8>) -> String? {
    // ASCII (every SMP key) is valid UTF-8 as it is: one pass instead of decode-and-compare.
    if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
    let text = String(decoding: bytes, as: UTF8.self)
    return text.utf8.elementsEqual(bytes) ? text : nil
}

/// `Data` holding a copy of a slice, in one memcpy (the generic initialiser goes byte by byte).
func dataCopy(_ bytes: ArraySlice<UInt8>) -> Data {
    bytes.withUnsafeBufferPointer { Data(buffer: $0) }
}
