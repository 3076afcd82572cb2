/// A Bluetooth UUID as advertising data and ATT carry it: 16, 32 or 128 bits, sent least
/// significant byte first. The short forms stand for 128-bit UUIDs built on the Bluetooth Base
/// UUID (`0000xxxx-0000-1000-8000-00805F9B34FB`).
public struct BluetoothUUID: Sendable, Hashable, CustomStringConvertible {
    /// The 16 bytes of the full UUID, most significant first (the order of its text form).
    public let bytes: [UInt8]

    private static let base: [UInt8] = [
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0x80, 0x5F, 0x9B, 0x34, 0xFB,
    ]

    private init(uncheckedBytes bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// Creates a UUID from its 16-bit alias.
    /// - Parameter value: the alias (e.g. 0x180D, Heart Rate).
    public init(_ value: UInt16) { self.init(UInt32(value)) }

    /// Creates a UUID from its 32-bit alias.
    /// - Parameter value: the alias.
    public init(_ value: UInt32) {
        var bytes = Self.base
        bytes[0] = UInt8(value >> 24)
        bytes[1] = UInt8(truncatingIfNeeded: value >> 16)
        bytes[2] = UInt8(truncatingIfNeeded: value >> 8)
        bytes[3] = UInt8(truncatingIfNeeded: value)
        self.bytes = bytes
    }

    /// Creates a UUID from its wire bytes.
    /// - Parameter littleEndianBytes: 2, 4 or 16 bytes, least significant first.
    /// - Returns: `nil` for any other count.
    public init?(littleEndianBytes: some Collection<UInt8>) {
        let reversed = Array(littleEndianBytes.reversed())
        switch reversed.count {
        case 2: self.init(UInt16(reversed[0]) << 8 | UInt16(reversed[1]))
        case 4: self.init(reversed.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        case 16: self.init(uncheckedBytes: reversed)
        default: return nil
        }
    }

    /// Parses the text form `8D53DC1D-1DB7-4CD3-868B-8A527460AA84` (any case).
    /// - Parameter text: 32 hex digits in groups of 8-4-4-4-12.
    /// - Returns: `nil` if the text is not a UUID.
    public init?(_ text: String) {
        let groups = text.split(separator: "-", omittingEmptySubsequences: false)
        guard groups.map(\.count) == [8, 4, 4, 4, 12] else { return nil }
        let digits = Array(groups.joined().utf8)
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let byte = UInt8(String(decoding: digits[index..<index + 2], as: UTF8.self), radix: 16) else {
                return nil
            }
            bytes.append(byte)
        }
        self.init(uncheckedBytes: bytes)
    }

    /// The 16-bit alias, if the UUID is built on the Base UUID and fits in 16 bits.
    public var shortValue: UInt16? {
        guard Array(bytes[4...]) == Array(Self.base[4...]), bytes[0] == 0, bytes[1] == 0 else { return nil }
        return UInt16(bytes[2]) << 8 | UInt16(bytes[3])
    }

    /// The 128-bit wire bytes, least significant first.
    public var littleEndianBytes: [UInt8] { bytes.reversed() }

    /// Uppercase text, `8D53DC1D-1DB7-4CD3-868B-8A527460AA84`.
    public var description: String {
        let digits = bytes.map { hex($0, digits: 2) }.joined()
        var text = ""
        for (index, character) in digits.enumerated() {
            if [8, 12, 16, 20].contains(index) { text.append("-") }
            text.append(character)
        }
        return text
    }
}
