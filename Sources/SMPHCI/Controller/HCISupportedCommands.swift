/// The controller's Supported_Commands bitmap (Read Local Supported Commands, Core Vol 4 Part E
/// 6.27): 64 octets, one bit per command.
public struct HCISupportedCommands: Sendable, Hashable {
    /// The bitmap's size in bytes.
    public static let byteCount = 64

    /// The 64 bytes, octet 0 first.
    public let bytes: [UInt8]

    /// Creates the bitmap from its bytes.
    /// - Parameter bytes: exactly 64 bytes.
    /// - Returns: `nil` for any other count.
    public init?(bytes: [UInt8]) {
        guard bytes.count == Self.byteCount else { return nil }
        self.bytes = bytes
    }

    init(uncheckedBytes bytes: [UInt8]) {
        assert(bytes.count == Self.byteCount)
        self.bytes = bytes
    }

    /// Whether a bit of the bitmap is set.
    /// - Parameters:
    ///   - octet: the octet, 0 to 63.
    ///   - bit: the bit in the octet, 0 to 7.
    /// - Returns: whether it is set; `false` out of range.
    public func contains(octet: Int, bit: Int) -> Bool {
        guard (0..<bytes.count).contains(octet), (0..<8).contains(bit) else { return false }
        return bytes[octet] & (1 << bit) != 0
    }

    /// LE Read Buffer Size v2 (octet 41, bit 5).
    public var leReadBufferSizeV2: Bool { contains(octet: 41, bit: 5) }
    /// LE Set Extended Scan Parameters (octet 37, bit 5).
    public var leSetExtendedScanParameters: Bool { contains(octet: 37, bit: 5) }
    /// LE Set Extended Scan Enable (octet 37, bit 6).
    public var leSetExtendedScanEnable: Bool { contains(octet: 37, bit: 6) }
    /// LE Extended Create Connection (octet 37, bit 7).
    public var leExtendedCreateConnection: Bool { contains(octet: 37, bit: 7) }
    /// LE Set Random Address (octet 25, bit 4).
    public var leSetRandomAddress: Bool { contains(octet: 25, bit: 4) }
    /// Both extended scanning commands: the controller scans with extended advertising reports.
    public var extendedScanning: Bool { leSetExtendedScanParameters && leSetExtendedScanEnable }
}
