/// Byte order of a multi-byte integer on the wire.
///
/// There is deliberately no default: SMP headers, serial length prefixes and CRCs are big-endian,
/// MCUboot structures are little-endian, and every call site says which one it means.
public enum Endianness: Sendable, Hashable {
    /// Most significant byte first (network order): SMP header, serial framing.
    case big
    /// Least significant byte first: MCUboot image header, TLVs.
    case little
}

/// A cursor over immutable bytes, in the read/peek/get vocabulary of SwiftNIO's `ByteBuffer`.
///
/// `read…` consumes bytes and moves ``readerIndex``; `peek…` looks at the bytes at the reader
/// index without moving it; `get…(at:)` reads at an absolute index. Every read returns `nil`
/// when too few bytes remain, so callers turn a short input into their own specific error
/// instead of trapping.
public struct ByteReader: Sendable {
    /// The bytes being read. Indices are zero-based offsets into this array.
    public let bytes: [UInt8]
    /// Offset of the next byte that ``readInteger(endianness:as:)`` and friends consume.
    @inlinable public var readerIndex: Int { index }
    // Internal but inlinable: the accessors below are generic and must specialise in callers'
    // modules, or every integer read goes through unspecialised generic arithmetic.
    @usableFromInline var index: Int

    /// Creates a reader positioned at the first byte.
    /// - Parameter bytes: the bytes to read.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.index = 0
    }

    /// Creates a reader over any byte sequence (for example `Data`), positioned at its first byte.
    /// - Parameter bytes: the bytes to read; they are copied once.
    public init(_ bytes: some Sequence<UInt8>) {
        self.init(Array(bytes))
    }

    /// Number of bytes not yet consumed.
    @inlinable
    public var readableBytes: Int { bytes.count - readerIndex }

    /// Reads an integer at an absolute offset without moving the reader index.
    /// - Parameters:
    ///   - index: offset of the integer's first byte.
    ///   - endianness: byte order of the integer on the wire.
    ///   - type: the integer type to produce.
    /// - Returns: the integer, or `nil` if fewer than `T`'s size bytes exist at `index`.
    @inlinable
    public func getInteger<T: FixedWidthInteger>(at index: Int, endianness: Endianness, as type: T.Type = T.self) -> T?
    {
        let size = MemoryLayout<T>.size
        guard index >= 0, size <= bytes.count - index else { return nil }
        var value: T = 0
        switch endianness {
        case .big:
            for offset in 0..<size { value = (value << 8) | T(bytes[index + offset]) }
        case .little:
            for offset in stride(from: size - 1, through: 0, by: -1) { value = (value << 8) | T(bytes[index + offset]) }
        }
        return value
    }

    /// Reads an integer at the reader index without consuming it.
    /// - Parameters:
    ///   - endianness: byte order of the integer on the wire.
    ///   - type: the integer type to produce.
    /// - Returns: the integer, or `nil` if too few bytes remain.
    @inlinable
    public func peekInteger<T: FixedWidthInteger>(endianness: Endianness, as type: T.Type = T.self) -> T? {
        getInteger(at: readerIndex, endianness: endianness, as: type)
    }

    /// Reads and consumes an integer.
    /// - Parameters:
    ///   - endianness: byte order of the integer on the wire.
    ///   - type: the integer type to produce.
    /// - Returns: the integer, or `nil` (consuming nothing) if too few bytes remain.
    @inlinable
    public mutating func readInteger<T: FixedWidthInteger>(endianness: Endianness, as type: T.Type = T.self) -> T? {
        guard let value = peekInteger(endianness: endianness, as: type) else { return nil }
        index += MemoryLayout<T>.size
        return value
    }

    /// Reads and consumes one byte.
    /// - Returns: the byte, or `nil` at the end of the input.
    @inlinable
    public mutating func readByte() -> UInt8? {
        guard readerIndex < bytes.count else { return nil }
        defer { index += 1 }
        return bytes[readerIndex]
    }

    /// Looks at the next byte without consuming it.
    /// - Returns: the byte, or `nil` at the end of the input.
    @inlinable
    public func peekByte() -> UInt8? {
        readerIndex < bytes.count ? bytes[readerIndex] : nil
    }

    /// Reads and consumes `count` bytes.
    /// - Parameter count: number of bytes; negative counts are treated as unavailable.
    /// - Returns: the bytes, or `nil` (consuming nothing) if fewer than `count` remain.
    @inlinable
    public mutating func readBytes(count: Int) -> ArraySlice<UInt8>? {
        guard let slice = peekBytes(count: count) else { return nil }
        index += count
        return slice
    }

    /// Returns the next `count` bytes without consuming them.
    /// - Parameter count: number of bytes.
    /// - Returns: the bytes, or `nil` if fewer than `count` remain.
    @inlinable
    public func peekBytes(count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, count <= readableBytes else { return nil }
        return bytes[readerIndex..<readerIndex + count]
    }

    /// Skips `count` bytes.
    /// - Parameter count: number of bytes to skip.
    /// - Returns: `false` (moving nothing) if fewer than `count` remain.
    @inlinable @discardableResult
    public mutating func moveReaderIndex(forwardBy count: Int) -> Bool {
        guard count >= 0, count <= readableBytes else { return false }
        index += count
        return true
    }

    /// Moves the reader index to an absolute offset.
    /// - Parameter index: the new offset, between 0 and the byte count inclusive.
    /// - Returns: `false` (moving nothing) if `index` is out of range.
    @inlinable @discardableResult
    public mutating func moveReaderIndex(to index: Int) -> Bool {
        guard index >= 0, index <= bytes.count else { return false }
        self.index = index
        return true
    }
}
