/// An Attribute Protocol opcode (Core Vol 3 Part F 3.3.1). An open set: a PDU with an opcode this
/// table does not name keeps its number, so a server can answer it ("request not supported") or
/// ignore it (a command).
///
/// Bit 6 is the command flag (no answer is ever sent to a command); bit 7 the authentication
/// signature flag.
public struct ATTOpcode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    /// Creates an opcode from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01 Error Response.
    public static let errorResponse = ATTOpcode(rawValue: 0x01)
    /// 0x02 Exchange MTU Request.
    public static let exchangeMTURequest = ATTOpcode(rawValue: 0x02)
    /// 0x03 Exchange MTU Response.
    public static let exchangeMTUResponse = ATTOpcode(rawValue: 0x03)
    /// 0x04 Find Information Request.
    public static let findInformationRequest = ATTOpcode(rawValue: 0x04)
    /// 0x05 Find Information Response.
    public static let findInformationResponse = ATTOpcode(rawValue: 0x05)
    /// 0x06 Find By Type Value Request.
    public static let findByTypeValueRequest = ATTOpcode(rawValue: 0x06)
    /// 0x07 Find By Type Value Response.
    public static let findByTypeValueResponse = ATTOpcode(rawValue: 0x07)
    /// 0x08 Read By Type Request.
    public static let readByTypeRequest = ATTOpcode(rawValue: 0x08)
    /// 0x09 Read By Type Response.
    public static let readByTypeResponse = ATTOpcode(rawValue: 0x09)
    /// 0x0A Read Request.
    public static let readRequest = ATTOpcode(rawValue: 0x0A)
    /// 0x0B Read Response.
    public static let readResponse = ATTOpcode(rawValue: 0x0B)
    /// 0x0C Read Blob Request.
    public static let readBlobRequest = ATTOpcode(rawValue: 0x0C)
    /// 0x0D Read Blob Response.
    public static let readBlobResponse = ATTOpcode(rawValue: 0x0D)
    /// 0x10 Read By Group Type Request.
    public static let readByGroupTypeRequest = ATTOpcode(rawValue: 0x10)
    /// 0x11 Read By Group Type Response.
    public static let readByGroupTypeResponse = ATTOpcode(rawValue: 0x11)
    /// 0x12 Write Request.
    public static let writeRequest = ATTOpcode(rawValue: 0x12)
    /// 0x13 Write Response.
    public static let writeResponse = ATTOpcode(rawValue: 0x13)
    /// 0x1B Handle Value Notification.
    public static let handleValueNotification = ATTOpcode(rawValue: 0x1B)
    /// 0x1D Handle Value Indication.
    public static let handleValueIndication = ATTOpcode(rawValue: 0x1D)
    /// 0x1E Handle Value Confirmation.
    public static let handleValueConfirmation = ATTOpcode(rawValue: 0x1E)
    /// 0x52 Write Command.
    public static let writeCommand = ATTOpcode(rawValue: 0x52)

    /// Whether the command flag (bit 6) is set: the receiver never answers such a PDU, not even
    /// when it does not know it.
    public var isCommand: Bool { rawValue & 0x40 != 0 }

    /// Whether the opcode is a request a server must answer (every request of the specification
    /// and every unknown opcode without the command flag, which gets "request not supported"),
    /// as opposed to a command, a response, a notification, an indication or a confirmation.
    public var isRequest: Bool {
        guard !isCommand else { return false }
        return !Self.serverToClient.contains(rawValue) && self != .handleValueConfirmation
    }

    /// Responses (0x01, odd opcodes up to 0x21, and 0x27 Read Multiple Variable Response),
    /// notifications and indications, which a server never answers (0x1B, 0x1D, 0x23).
    private static let serverToClient: Set<UInt8> = [
        0x01, 0x03, 0x05, 0x07, 0x09, 0x0B, 0x0D, 0x0F, 0x11, 0x13, 0x17, 0x19, 0x1B, 0x1D, 0x21, 0x23, 0x27,
    ]

    /// The name, or `nil` for opcodes this table does not name.
    public var name: String? {
        switch rawValue {
        case 0x01: "Error Response"
        case 0x02: "Exchange MTU Request"
        case 0x03: "Exchange MTU Response"
        case 0x04: "Find Information Request"
        case 0x05: "Find Information Response"
        case 0x06: "Find By Type Value Request"
        case 0x07: "Find By Type Value Response"
        case 0x08: "Read By Type Request"
        case 0x09: "Read By Type Response"
        case 0x0A: "Read Request"
        case 0x0B: "Read Response"
        case 0x0C: "Read Blob Request"
        case 0x0D: "Read Blob Response"
        case 0x10: "Read By Group Type Request"
        case 0x11: "Read By Group Type Response"
        case 0x12: "Write Request"
        case 0x13: "Write Response"
        case 0x1B: "Handle Value Notification"
        case 0x1D: "Handle Value Indication"
        case 0x1E: "Handle Value Confirmation"
        case 0x52: "Write Command"
        default: nil
        }
    }

    /// `Read Request (0x0A)`; `0x16` alone for opcodes without a name.
    public var description: String {
        let number = "0x" + hex(rawValue, digits: 2)
        return name.map { "\($0) (\(number))" } ?? number
    }
}
