import Foundation

/// Item-by-item reading, for types that decode themselves without building a ``CBOR`` tree
/// (see ``CBORDirectDecodable``). Every call validates what it reads exactly as
/// ``CBORReader/readValue()`` does, and throws ``CBORError`` with the byte offset.
extension CBORReader {
    /// Reads the head of a map.
    /// - Returns: the entry count, or `nil` for an indefinite-length map (end it with
    ///   ``readBreakIfPresent()``).
    /// - Throws: ``CBORError`` `.unexpectedType` if the next item is not a map.
    public mutating func readMapHeader() throws(CBORError) -> Int? {
        let start = offset
        guard let initial = peekInitialByte() else { throw CBORError(.truncated, at: start) }
        guard initial >> 5 == 5 else { throw CBORError(.unexpectedType, at: start) }
        if initial == 0xbf {
            skipBytes(1)
            return nil
        }
        let count = try readArgument(major: 5)
        // Each entry needs at least two bytes: a larger count cannot be honest.
        guard count <= UInt64(remainingByteCount / 2) else { throw CBORError(.lengthExceedsInput, at: start) }
        return Int(count)
    }

    /// Consumes a break byte if it is next.
    /// - Returns: whether a break was consumed.
    /// - Throws: ``CBORError`` `.truncated` at the end of the input.
    public mutating func readBreakIfPresent() throws(CBORError) -> Bool {
        guard let initial = peekInitialByte() else { throw CBORError(.truncated, at: offset) }
        guard initial == 0xff else { return false }
        skipBytes(1)
        return true
    }

    /// Reads a definite or indefinite text string.
    /// - Throws: ``CBORError`` `.unexpectedType`, `.invalidUTF8`, `.truncated`…
    public mutating func readText() throws(CBORError) -> String {
        let start = offset
        guard let initial = peekInitialByte() else { throw CBORError(.truncated, at: start) }
        guard initial >> 5 == 3 else { throw CBORError(.unexpectedType, at: start) }
        if initial == 0x7f {
            guard case .textString(let text) = try readValue() else { throw CBORError(.unexpectedType, at: start) }
            return text
        }
        let length = try readArgument(major: 3)
        let bytes = try readRawBytes(length, start: start)
        guard let text = validUTF8String(bytes) else { throw CBORError(.invalidUTF8, at: start) }
        return text
    }

    /// Reads a definite or indefinite byte string.
    /// - Throws: ``CBORError`` `.unexpectedType`, `.truncated`…
    public mutating func readByteString() throws(CBORError) -> Data {
        let start = offset
        guard let initial = peekInitialByte() else { throw CBORError(.truncated, at: start) }
        guard initial >> 5 == 2 else { throw CBORError(.unexpectedType, at: start) }
        if initial == 0x5f {
            guard case .byteString(let data) = try readValue() else { throw CBORError(.unexpectedType, at: start) }
            return data
        }
        let length: UInt64
        if let fast = readDefiniteArgument(major: 2) { length = fast } else { length = try readArgument(major: 2) }
        return dataCopy(try readRawBytes(length, start: start))
    }

    /// Reads a non-negative integer.
    /// - Throws: ``CBORError`` `.unexpectedType` for anything else (negative integers included).
    public mutating func readUnsigned() throws(CBORError) -> UInt64 {
        if let value = readDefiniteArgument(major: 0) { return value }
        let start = offset
        guard let initial = peekInitialByte() else { throw CBORError(.truncated, at: start) }
        guard initial >> 5 == 0 else { throw CBORError(.unexpectedType, at: start) }
        return try readArgument(major: 0)
    }

    /// Reads `true` or `false`.
    /// - Throws: ``CBORError`` `.unexpectedType` for anything else.
    public mutating func readBool() throws(CBORError) -> Bool {
        let start = offset
        switch peekInitialByte() {
        case 0xf4:
            skipBytes(1)
            return false
        case 0xf5:
            skipBytes(1)
            return true
        case nil: throw CBORError(.truncated, at: start)
        default: throw CBORError(.unexpectedType, at: start)
        }
    }

    /// Reads a text-string map key and says which of `keys` it is, without building a `String`.
    /// - Parameter keys: the keys the caller knows.
    /// - Returns: the index in `keys`, or `nil` for any other (valid UTF-8) key.
    /// - Throws: ``CBORError`` `.unexpectedType` for a non-text key, `.invalidUTF8`, `.truncated`…
    public mutating func readKey(_ keys: CBORKeySet) throws(CBORError) -> Int? {
        // Fast path: a short key that is one of ours (ASCII, so valid UTF-8 by construction).
        if let short = peekPackedShortText(), let found = keys.index(length: short.length, packed: short.value) {
            skipBytes(1 + short.length)
            return found
        }
        let start = offset
        guard let initial = peekInitialByte() else { throw CBORError(.truncated, at: start) }
        guard initial >> 5 == 3 else { throw CBORError(.unexpectedType, at: start) }
        if initial == 0x7f {
            return keys.index(of: Array(try readText().utf8)[...])
        }
        let length = try readArgument(major: 3)
        let bytes = try readRawBytes(length, start: start)
        if let found = keys.index(of: bytes) { return found }
        guard validUTF8String(bytes) != nil else { throw CBORError(.invalidUTF8, at: start) }
        return nil
    }

    /// Reads and discards one whole item, validating it.
    public mutating func skipValue() throws(CBORError) {
        _ = try readValue()
    }

    /// Reads an argument (count, length or value) in the shortest or any longer form.
    private mutating func readArgument(major: UInt8) throws(CBORError) -> UInt64 {
        let start = offset
        guard let initial = readInitialByte() else { throw CBORError(.truncated, at: start) }
        let info = initial & 0x1f
        switch info {
        case 0..<24: return UInt64(info)
        case 24...27:
            let size = 1 << Int(info - 24)
            guard let bytes = readRawBytesIfAvailable(size) else { throw CBORError(.truncated, at: start) }
            return bytes.reduce(0) { $0 << 8 | UInt64($1) }
        default: throw CBORError(.reservedAdditionalInfo, at: start)
        }
    }

    private mutating func readRawBytes(_ length: UInt64, start: Int) throws(CBORError) -> ArraySlice<UInt8> {
        guard length <= UInt64(remainingByteCount), let bytes = readRawBytesIfAvailable(Int(length)) else {
            throw CBORError(.lengthExceedsInput, at: start)
        }
        return bytes
    }
}

/// A type that writes its CBOR form directly, without Codable's containers.
///
/// The hot messages (image and file chunks) conform so uploads do not pay for Codable's
/// boxing; ``CBOREncoder`` uses it automatically for insertion-ordered output. A conforming
/// type must write exactly what its synthesised `Encodable` conformance writes — its tests
/// compare the two.
public protocol CBORDirectEncodable: Encodable {
    /// Appends the value's encoding.
    /// - Parameter writer: the destination.
    func encodeCBOR(into writer: inout CBORWriter)

    /// A guess of the encoded size, to size the output buffer once.
    var encodedSizeHint: Int { get }
}

extension CBORDirectEncodable {
    /// 64 bytes unless the type knows better.
    public var encodedSizeHint: Int { 64 }
}

/// A type that reads itself directly from a ``CBORReader``, without building a tree.
///
/// ``CBORDecoder`` uses it automatically when decoding from bytes. A conforming type must accept
/// what its `Decodable` conformance accepts (any key order, definite or indefinite maps,
/// unknown keys skipped) and reject what it rejects.
public protocol CBORDirectDecodable: Decodable {
    /// Reads one value.
    /// - Parameter reader: positioned at the value's first byte.
    /// - Throws: ``CBORError``, or `DecodingError` for a missing required key.
    init(cbor reader: inout CBORReader) throws
}

/// A fixed set of map keys, prepared once so that matching a key read from the wire is a few
/// integer comparisons: keys of up to 8 bytes are packed into a `UInt64` with their length.
public struct CBORKeySet: Sendable {
    private let packed: [(length: Int, value: UInt64)]
    private let long: [[UInt8]?]

    /// Prepares a set.
    /// - Parameter keys: the keys, in the order their indices are reported.
    public init(_ keys: [String]) {
        packed = keys.map { key in
            let bytes = Array(key.utf8)
            return (bytes.count, bytes.count <= 8 ? CBORKeySet.pack(bytes[...]) : 0)
        }
        long = keys.map { $0.utf8.count > 8 ? Array($0.utf8) : nil }
    }

    /// The index of a key of at most 8 bytes given packed, or `nil`.
    func index(length: Int, packed value: UInt64) -> Int? {
        for (index, key) in packed.enumerated() where key.length == length && key.value == value { return index }
        return nil
    }

    /// The index of `bytes` in the set, or `nil`.
    func index(of bytes: ArraySlice<UInt8>) -> Int? {
        let count = bytes.count
        if count <= 8 {
            let value = CBORKeySet.pack(bytes)
            for (index, key) in packed.enumerated() where key.length == count && key.value == value { return index }
            return nil
        }
        for (index, key) in long.enumerated() where key?.count == count && key?.elementsEqual(bytes) == true {
            return index
        }
        return nil
    }

    private static func pack(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        var value: UInt64 = 0
        for byte in bytes { value = value << 8 | UInt64(byte) }
        return value
    }
}
