/// A management-layer return code: the SMP v1 `rc` value (`MGMT_ERR_*`).
///
/// An open set: an unknown value keeps its number and is never mistaken for success. Only 0
/// means success.
public struct SMPReturnCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: Int
    /// Creates a return code from its value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 0 EOK: success.
    public static let ok = SMPReturnCode(rawValue: 0)
    /// 1 EUNKNOWN: unknown error.
    public static let unknown = SMPReturnCode(rawValue: 1)
    /// 2 ENOMEM: not enough memory.
    public static let noMemory = SMPReturnCode(rawValue: 2)
    /// 3 EINVAL: invalid value in the request.
    public static let invalidValue = SMPReturnCode(rawValue: 3)
    /// 4 ETIMEOUT: operation timed out.
    public static let timeout = SMPReturnCode(rawValue: 4)
    /// 5 ENOENT: no such entry, required field missing, or information unavailable.
    public static let noEntry = SMPReturnCode(rawValue: 5)
    /// 6 EBADSTATE: the current state disallows the command.
    public static let badState = SMPReturnCode(rawValue: 6)
    /// 7 EMSGSIZE: the response would not fit the buffer.
    public static let messageTooLarge = SMPReturnCode(rawValue: 7)
    /// 8 ENOTSUP: group or command not supported.
    public static let notSupported = SMPReturnCode(rawValue: 8)
    /// 9 ECORRUPT: corrupt payload.
    public static let corruptPayload = SMPReturnCode(rawValue: 9)
    /// 10 EBUSY: busy with a previous request; retry later.
    public static let busy = SMPReturnCode(rawValue: 10)
    /// 11 EACCESSDENIED: access to the command or resource denied.
    public static let accessDenied = SMPReturnCode(rawValue: 11)
    /// 12: the request's SMP version is too old for the server.
    public static let protocolVersionTooOld = SMPReturnCode(rawValue: 12)
    /// 13: the request's SMP version is too new for the server (answer to v2 from a v1-only device).
    public static let protocolVersionTooNew = SMPReturnCode(rawValue: 13)
    /// 256 EPERUSER: first user-defined code.
    public static let perUser = SMPReturnCode(rawValue: 256)

    private static let names = [
        "EOK", "EUNKNOWN", "ENOMEM", "EINVAL", "ETIMEOUT", "ENOENT", "EBADSTATE", "EMSGSIZE", "ENOTSUP",
        "ECORRUPT", "EBUSY", "EACCESSDENIED", "UNSUPPORTED_TOO_OLD", "UNSUPPORTED_TOO_NEW",
    ]

    /// The `MGMT_ERR_` name without its prefix (e.g. `ENOTSUP`), `EPERUSER+n` for user codes, or
    /// `UNKNOWN_RC` for values no table defines.
    public var name: String {
        if rawValue >= 0 && rawValue < SMPReturnCode.names.count { return SMPReturnCode.names[rawValue] }
        if rawValue >= 256 { return rawValue == 256 ? "EPERUSER" : "EPERUSER+\(rawValue - 256)" }
        return "UNKNOWN_RC"
    }

    public var description: String { "\(rawValue) \(name)" }

    /// What the code means, in a few words (`out of memory` for ENOMEM); `nil` for codes no
    /// table defines and for EOK.
    public var meaning: String? {
        switch rawValue {
        case 1: "unknown error"
        case 2: "out of memory"
        case 3: "invalid value in the request"
        case 4: "timed out"
        case 5: "no such entry"
        case 6: "not allowed in the current state"
        case 7: "the answer does not fit the device's buffer"
        case 8: "not supported"
        case 9: "corrupt request"
        case 10: "busy, try again"
        case 11: "access denied"
        case 12: "SMP version too old for the device"
        case 13: "SMP version too new for the device"
        default: rawValue >= 256 ? "application-defined" : nil
        }
    }
}

/// A group's own (SMP v2) return code, typed by the group that defines it.
///
/// `ImageManagement.ReturnCode.noFreeSlot` and `SMPGroupReturnCode<ImageManagement>(rawValue: 9)`
/// are the same value. Unknown values keep their number; only 0 means success.
public struct SMPGroupReturnCode<Group: SMPManagementGroup>: RawRepresentable, Sendable, Hashable,
    CustomStringConvertible
{
    public let rawValue: Int
    /// Creates a return code from its value.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// The name from the group's table (e.g. `NO_FREE_SLOT`), or `UNKNOWN_RC`.
    public var name: String { SMPGroupReturnCode.name(of: rawValue, in: Group.returnCodeNames) }

    public var description: String { "\(rawValue) \(name)" }

    static func name(of value: Int, in table: [String]) -> String {
        value >= 0 && value < table.count ? table[value] : "UNKNOWN_RC"
    }
}

/// A namespace for one management group: its id and its return-code table.
public protocol SMPManagementGroup {
    /// The group id.
    static var group: SMPGroup { get }
    /// The names of the group's return codes; the value of each is its position (0 = `OK`).
    static var returnCodeNames: [String] { get }
}
