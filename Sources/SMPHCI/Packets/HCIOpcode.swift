/// A command's opcode: the Opcode Group Field (6 bits) and the Opcode Command Field (10 bits),
/// sent little-endian as one 16-bit value.
///
/// An open set: any value is an opcode; the named ones are those this host sends.
public struct HCIOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    /// Creates an opcode from its 16-bit value.
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// Creates an opcode from its group and command fields.
    /// - Parameters:
    ///   - ogf: the group (6 bits: 0x01 link control, 0x03 controller and baseband, 0x04
    ///     informational, 0x08 LE); higher bits are dropped.
    ///   - ocf: the command within the group (10 bits); higher bits are dropped.
    public init(ogf: UInt8, ocf: UInt16) {
        self.rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF)
    }

    /// The Opcode Group Field.
    public var ogf: UInt8 { UInt8(rawValue >> 10) }
    /// The Opcode Command Field.
    public var ocf: UInt16 { rawValue & 0x03FF }

    /// 0x0000: no operation. A controller sends a Command Complete for it only to grant command
    /// credits (for example after power-on).
    public static let noOperation = HCIOpcode(rawValue: 0x0000)
    /// Disconnect (link control, 0x0006).
    public static let disconnect = HCIOpcode(ogf: 0x01, ocf: 0x0006)
    /// Set Event Mask (controller and baseband, 0x0001).
    public static let setEventMask = HCIOpcode(ogf: 0x03, ocf: 0x0001)
    /// Reset (controller and baseband, 0x0003).
    public static let reset = HCIOpcode(ogf: 0x03, ocf: 0x0003)
    /// Read Local Version Information (informational, 0x0001).
    public static let readLocalVersionInformation = HCIOpcode(ogf: 0x04, ocf: 0x0001)
    /// Read Local Supported Commands (informational, 0x0002).
    public static let readLocalSupportedCommands = HCIOpcode(ogf: 0x04, ocf: 0x0002)
    /// Read Buffer Size (informational, 0x0005).
    public static let readBufferSize = HCIOpcode(ogf: 0x04, ocf: 0x0005)
    /// Read BD_ADDR (informational, 0x0009).
    public static let readBDADDR = HCIOpcode(ogf: 0x04, ocf: 0x0009)
    /// LE Set Event Mask (LE, 0x0001).
    public static let leSetEventMask = HCIOpcode(ogf: 0x08, ocf: 0x0001)
    /// LE Read Buffer Size [v1] (LE, 0x0002).
    public static let leReadBufferSize = HCIOpcode(ogf: 0x08, ocf: 0x0002)
    /// LE Set Random Address (LE, 0x0005).
    public static let leSetRandomAddress = HCIOpcode(ogf: 0x08, ocf: 0x0005)
    /// LE Set Advertising Parameters (LE, 0x0006).
    public static let leSetAdvertisingParameters = HCIOpcode(ogf: 0x08, ocf: 0x0006)
    /// LE Set Advertising Data (LE, 0x0008).
    public static let leSetAdvertisingData = HCIOpcode(ogf: 0x08, ocf: 0x0008)
    /// LE Set Scan Response Data (LE, 0x0009).
    public static let leSetScanResponseData = HCIOpcode(ogf: 0x08, ocf: 0x0009)
    /// LE Set Advertising Enable (LE, 0x000A).
    public static let leSetAdvertisingEnable = HCIOpcode(ogf: 0x08, ocf: 0x000A)
    /// LE Set Scan Parameters (LE, 0x000B).
    public static let leSetScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x000B)
    /// LE Set Scan Enable (LE, 0x000C).
    public static let leSetScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x000C)
    /// LE Create Connection (LE, 0x000D).
    public static let leCreateConnection = HCIOpcode(ogf: 0x08, ocf: 0x000D)
    /// LE Create Connection Cancel (LE, 0x000E).
    public static let leCreateConnectionCancel = HCIOpcode(ogf: 0x08, ocf: 0x000E)
    /// LE Set Data Length (LE, 0x0022).
    public static let leSetDataLength = HCIOpcode(ogf: 0x08, ocf: 0x0022)
    /// LE Set Extended Scan Parameters (LE, 0x0041).
    public static let leSetExtendedScanParameters = HCIOpcode(ogf: 0x08, ocf: 0x0041)
    /// LE Set Extended Scan Enable (LE, 0x0042).
    public static let leSetExtendedScanEnable = HCIOpcode(ogf: 0x08, ocf: 0x0042)
    /// LE Read Buffer Size v2 (LE, 0x0060).
    public static let leReadBufferSizeV2 = HCIOpcode(ogf: 0x08, ocf: 0x0060)

    /// `OGF 0x08 OCF 0x000D (0x200D)`.
    public var description: String {
        "OGF 0x\(hex(ogf, digits: 2)) OCF 0x\(hex(ocf, digits: 4)) (0x\(hex(rawValue, digits: 4)))"
    }
}

/// Uppercase hex of an integer, zero-padded to `digits`.
func hex(_ value: some BinaryInteger, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
}
