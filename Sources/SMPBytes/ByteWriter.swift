/// An append-only byte buffer in the write/set vocabulary of SwiftNIO's `ByteBuffer`.
///
/// Writes return the number of bytes written (discardable). `setInteger(_:at:endianness:)`
/// back-patches a value already written, e.g. the length field of an SMP header.
public struct ByteWriter: Sendable {
    /// The bytes written so far.
    @inlinable public var bytes: [UInt8] { storage }
    // Inlinable storage so the generic writers specialise in callers' modules.
    @usableFromInline var storage: [UInt8]

    /// Creates an empty writer.
    /// - Parameter capacity: bytes to reserve up front, to avoid regrowth on large frames.
    public init(capacity: Int = 0) {
        storage = []
        storage.reserveCapacity(capacity)
    }

    /// Number of bytes written so far.
    @inlinable public var writerIndex: Int { storage.count }

    /// Appends an integer.
    /// - Parameters:
    ///   - value: the integer.
    ///   - endianness: byte order on the wire.
    /// - Returns: the number of bytes written.
    @inlinable @discardableResult
    public mutating func writeInteger<T: FixedWidthInteger>(_ value: T, endianness: Endianness) -> Int {
        let size = MemoryLayout<T>.size
        switch endianness {
        case .big:
            for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
                storage.append(UInt8(truncatingIfNeeded: value >> shift))
            }
        case .little:
            for shift in stride(from: 0, to: size * 8, by: 8) {
                storage.append(UInt8(truncatingIfNeeded: value >> shift))
            }
        }
        return size
    }

    /// Appends one byte.
    /// - Parameter byte: the byte.
    /// - Returns: 1.
    @inlinable @discardableResult
    public mutating func writeByte(_ byte: UInt8) -> Int {
        storage.append(byte)
        return 1
    }

    /// Appends a sequence of bytes.
    /// - Parameter newBytes: the bytes.
    /// - Returns: the number of bytes written.
    @inlinable @discardableResult
    public mutating func writeBytes(_ newBytes: some Collection<UInt8>) -> Int {
        storage.append(contentsOf: newBytes)
        return newBytes.count
    }

    /// Overwrites an integer that was already written.
    /// - Parameters:
    ///   - value: the integer.
    ///   - index: offset of its first byte; the whole integer must lie inside what was written.
    ///   - endianness: byte order on the wire.
    /// - Returns: `false` (writing nothing) if the range lies outside the written bytes.
    @inlinable @discardableResult
    public mutating func setInteger<T: FixedWidthInteger>(_ value: T, at index: Int, endianness: Endianness) -> Bool {
        let size = MemoryLayout<T>.size
        guard index >= 0, size <= storage.count - index else { return false }
        for position in 0..<size {
            let shift = endianness == .big ? (size - 1 - position) * 8 : position * 8
            storage[index + position] = UInt8(truncatingIfNeeded: value >> shift)
        }
        return true
    }
}
