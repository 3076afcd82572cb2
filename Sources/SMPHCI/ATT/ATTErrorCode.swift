/// An Attribute Protocol error code, carried by an Error Response (Core Vol 3 Part F 3.4.1.1;
/// 0xE0–0xFF are application and common profile codes, Core Specification Supplement Part B).
///
/// An open set: a code this table does not name keeps its number.
public struct ATTErrorCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    /// Creates an error code from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01: the handle is 0x0000, or no attribute has it, or a range's start is after its end.
    public static let invalidHandle = ATTErrorCode(rawValue: 0x01)
    /// 0x02: the attribute cannot be read.
    public static let readNotPermitted = ATTErrorCode(rawValue: 0x02)
    /// 0x03: the attribute cannot be written.
    public static let writeNotPermitted = ATTErrorCode(rawValue: 0x03)
    /// 0x04: the PDU is not valid.
    public static let invalidPDU = ATTErrorCode(rawValue: 0x04)
    /// 0x05: the attribute needs an authenticated (paired) link.
    public static let insufficientAuthentication = ATTErrorCode(rawValue: 0x05)
    /// 0x06: the server does not support the request.
    public static let requestNotSupported = ATTErrorCode(rawValue: 0x06)
    /// 0x07: the offset is past the end of the value.
    public static let invalidOffset = ATTErrorCode(rawValue: 0x07)
    /// 0x08: the attribute needs authorization.
    public static let insufficientAuthorization = ATTErrorCode(rawValue: 0x08)
    /// 0x09: too many prepared writes.
    public static let prepareQueueFull = ATTErrorCode(rawValue: 0x09)
    /// 0x0A: no attribute in the range matches.
    public static let attributeNotFound = ATTErrorCode(rawValue: 0x0A)
    /// 0x0B: the attribute is too long for Read Request; use Read Blob.
    public static let attributeNotLong = ATTErrorCode(rawValue: 0x0B)
    /// 0x0C: the encryption key is too short.
    public static let encryptionKeySizeTooShort = ATTErrorCode(rawValue: 0x0C)
    /// 0x0D: the value's length is not what the attribute allows.
    public static let invalidAttributeValueLength = ATTErrorCode(rawValue: 0x0D)
    /// 0x0E: the request failed for a reason the server does not say.
    public static let unlikelyError = ATTErrorCode(rawValue: 0x0E)
    /// 0x0F: the attribute needs an encrypted link.
    public static let insufficientEncryption = ATTErrorCode(rawValue: 0x0F)
    /// 0x10: the type is not a grouping type (Read By Group Type on something other than a
    /// service).
    public static let unsupportedGroupType = ATTErrorCode(rawValue: 0x10)
    /// 0x11: the server is out of resources.
    public static let insufficientResources = ATTErrorCode(rawValue: 0x11)
    /// 0x12: the database changed since the client last looked (robust caching).
    public static let databaseOutOfSync = ATTErrorCode(rawValue: 0x12)
    /// 0x13: the value is not allowed.
    public static let valueNotAllowed = ATTErrorCode(rawValue: 0x13)
    /// 0xFD: a Client Characteristic Configuration descriptor is not configured as the request
    /// needs.
    public static let cccdImproperlyConfigured = ATTErrorCode(rawValue: 0xFD)
    /// 0xFE: a procedure is already in progress.
    public static let procedureAlreadyInProgress = ATTErrorCode(rawValue: 0xFE)
    /// 0xFF: the value is out of range.
    public static let outOfRange = ATTErrorCode(rawValue: 0xFF)

    /// The code's meaning in a few words, or `nil` for codes this table does not name.
    public var name: String? {
        switch rawValue {
        case 0x01: "invalid handle"
        case 0x02: "read not permitted"
        case 0x03: "write not permitted"
        case 0x04: "invalid PDU"
        case 0x05: "insufficient authentication"
        case 0x06: "request not supported"
        case 0x07: "invalid offset"
        case 0x08: "insufficient authorization"
        case 0x09: "prepare queue full"
        case 0x0A: "attribute not found"
        case 0x0B: "attribute not long"
        case 0x0C: "encryption key size too short"
        case 0x0D: "invalid attribute value length"
        case 0x0E: "unlikely error"
        case 0x0F: "insufficient encryption"
        case 0x10: "unsupported group type"
        case 0x11: "insufficient resources"
        case 0x12: "database out of sync"
        case 0x13: "value not allowed"
        case 0x80...0x9F: "application error"
        case 0xFC: "write request rejected"
        case 0xFD: "client characteristic configuration descriptor improperly configured"
        case 0xFE: "procedure already in progress"
        case 0xFF: "out of range"
        default: nil
        }
    }

    /// `insufficient authentication (0x05)`; `0x42` alone for codes without a name.
    public var description: String {
        let number = "0x" + hex(rawValue, digits: 2)
        return name.map { "\($0) (\(number))" } ?? number
    }
}
