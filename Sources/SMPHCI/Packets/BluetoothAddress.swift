/// A 48-bit Bluetooth device address (BD_ADDR), sent least significant byte first.
public struct BluetoothAddress: Sendable, Hashable, CustomStringConvertible {
    /// The six bytes as they appear on the wire: least significant first.
    public let littleEndianBytes: [UInt8]

    /// Creates an address from its wire bytes.
    /// - Parameter littleEndianBytes: six bytes, least significant first.
    /// - Returns: `nil` unless there are exactly six bytes.
    public init?(littleEndianBytes: some Collection<UInt8>) {
        guard littleEndianBytes.count == 6 else { return nil }
        self.littleEndianBytes = Array(littleEndianBytes)
    }

    /// Parses the usual text form, most significant byte first: `C4:F2:17:1A:1D:BB`.
    /// - Parameter text: six hex pairs separated by colons (or dashes).
    /// - Returns: `nil` if the text is not six separated hex pairs.
    public init?(_ text: String) {
        let parts = text.split(omittingEmptySubsequences: false) { $0 == ":" || $0 == "-" }
        guard parts.count == 6 else { return nil }
        var bytes: [UInt8] = []
        for part in parts.reversed() {
            guard part.count == 2, let byte = UInt8(part, radix: 16) else { return nil }
            bytes.append(byte)
        }
        self.littleEndianBytes = bytes
    }

    /// 00:00:00:00:00:00, what controllers report for "no address".
    public static let zero = BluetoothAddress(uncheckedLittleEndian: [0, 0, 0, 0, 0, 0])

    /// A static random address (Core Vol 6 Part B 1.3.2.1): the two most significant bits set,
    /// the other 46 neither all ones nor all zeros.
    /// - Parameter generator: the source of randomness.
    /// - Returns: the address.
    public static func randomStatic(using generator: inout some RandomNumberGenerator) -> BluetoothAddress {
        while true {
            var bytes = (0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) }
            bytes[5] |= 0xC0
            let rest = bytes[0..<5] + [bytes[5] & 0x3F]
            if rest.allSatisfy({ $0 == 0 }) || (rest.dropLast().allSatisfy { $0 == 0xFF } && rest.last == 0x3F) {
                continue
            }
            return BluetoothAddress(uncheckedLittleEndian: bytes)
        }
    }

    /// Whether this is a static random address (the two most significant bits set).
    public var isStaticRandom: Bool { littleEndianBytes[5] & 0xC0 == 0xC0 }

    init(uncheckedLittleEndian bytes: [UInt8]) {
        assert(bytes.count == 6)
        self.littleEndianBytes = bytes
    }

    /// Most significant byte first, uppercase, colon-separated: `C4:F2:17:1A:1D:BB`.
    public var description: String {
        littleEndianBytes.reversed().map { hex($0, digits: 2) }.joined(separator: ":")
    }
}

/// What kind of address a device uses (LE address types, Core Vol 4 Part E 7.8.12 and others).
///
/// An open set: the values above 0x03 differ between commands and events (0xFF anonymous, 0xFE
/// unresolved) and keep their number.
public struct LEAddressType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    /// Creates an address type from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x00: a public device address.
    public static let publicDevice = LEAddressType(rawValue: 0x00)
    /// 0x01: a random device address (static or private).
    public static let randomDevice = LEAddressType(rawValue: 0x01)
    /// 0x02: a public identity address (resolved from a resolvable private address).
    public static let publicIdentity = LEAddressType(rawValue: 0x02)
    /// 0x03: a random static identity address (resolved from a resolvable private address).
    public static let randomIdentity = LEAddressType(rawValue: 0x03)

    public var description: String {
        switch rawValue {
        case 0x00: "public"
        case 0x01: "random"
        case 0x02: "public identity"
        case 0x03: "random identity"
        default: "0x" + hex(rawValue, digits: 2)
        }
    }
}
