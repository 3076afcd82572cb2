/// An HCI status or error code (Core Specification Vol 1, Part F): the status of a command's
/// answer, the reason of a disconnection.
///
/// An open set: a code this table does not name keeps its number and is never mistaken for
/// success. Only 0 means success.
public struct HCIStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    /// Creates a status from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x00: success (and, in a Command Status event, "pending").
    public static let success = HCIStatus(rawValue: 0x00)
    /// 0x01: the controller does not know the command.
    public static let unknownCommand = HCIStatus(rawValue: 0x01)
    /// 0x02: no connection with that handle.
    public static let unknownConnectionIdentifier = HCIStatus(rawValue: 0x02)
    /// 0x03: the controller's hardware failed.
    public static let hardwareFailure = HCIStatus(rawValue: 0x03)
    /// 0x05: authentication failed.
    public static let authenticationFailure = HCIStatus(rawValue: 0x05)
    /// 0x06: PIN or key missing.
    public static let pinOrKeyMissing = HCIStatus(rawValue: 0x06)
    /// 0x07: the controller is out of memory.
    public static let memoryCapacityExceeded = HCIStatus(rawValue: 0x07)
    /// 0x08: the link's supervision timeout expired: the peer went away (out of range, powered
    /// off, reset).
    public static let connectionTimeout = HCIStatus(rawValue: 0x08)
    /// 0x09: the controller has no room for another connection.
    public static let connectionLimitExceeded = HCIStatus(rawValue: 0x09)
    /// 0x0B: a connection to that device already exists.
    public static let connectionAlreadyExists = HCIStatus(rawValue: 0x0B)
    /// 0x0C: the command is not allowed in the controller's current state.
    public static let commandDisallowed = HCIStatus(rawValue: 0x0C)
    /// 0x0D: connection rejected, limited resources.
    public static let rejectedLimitedResources = HCIStatus(rawValue: 0x0D)
    /// 0x11: a feature or parameter value the controller does not support.
    public static let unsupportedFeatureOrParameterValue = HCIStatus(rawValue: 0x11)
    /// 0x12: invalid command parameters.
    public static let invalidCommandParameters = HCIStatus(rawValue: 0x12)
    /// 0x13: the remote user ended the connection (the usual reason of a disconnect).
    public static let remoteUserTerminatedConnection = HCIStatus(rawValue: 0x13)
    /// 0x14: the remote device ended the connection, low on resources.
    public static let remoteDeviceTerminatedLowResources = HCIStatus(rawValue: 0x14)
    /// 0x15: the remote device ended the connection, powering off.
    public static let remoteDeviceTerminatedPowerOff = HCIStatus(rawValue: 0x15)
    /// 0x16: this host ended the connection.
    public static let connectionTerminatedByLocalHost = HCIStatus(rawValue: 0x16)
    /// 0x1A: the remote device does not support the feature.
    public static let unsupportedRemoteFeature = HCIStatus(rawValue: 0x1A)
    /// 0x1E: invalid LMP or LL parameters.
    public static let invalidLMPOrLLParameters = HCIStatus(rawValue: 0x1E)
    /// 0x1F: unspecified error.
    public static let unspecifiedError = HCIStatus(rawValue: 0x1F)
    /// 0x22: the peer's link layer did not answer a procedure in time.
    public static let llResponseTimeout = HCIStatus(rawValue: 0x22)
    /// 0x28: the instant of a link-layer procedure passed.
    public static let instantPassed = HCIStatus(rawValue: 0x28)
    /// 0x3A: the controller is busy.
    public static let controllerBusy = HCIStatus(rawValue: 0x3A)
    /// 0x3B: unacceptable connection parameters.
    public static let unacceptableConnectionParameters = HCIStatus(rawValue: 0x3B)
    /// 0x3D: connection ended, message integrity check failed.
    public static let connectionTerminatedMICFailure = HCIStatus(rawValue: 0x3D)
    /// 0x3E: the connection could not be established (the peer did not answer the connection
    /// request's first packets).
    public static let connectionFailedToBeEstablished = HCIStatus(rawValue: 0x3E)
    /// 0x44: the host cancelled the operation.
    public static let operationCancelledByHost = HCIStatus(rawValue: 0x44)

    /// Whether the status is success (0x00).
    public var isSuccess: Bool { rawValue == 0 }

    /// The code's meaning in a few words, or `nil` for codes this table does not name.
    public var name: String? {
        switch rawValue {
        case 0x00: "success"
        case 0x01: "unknown HCI command"
        case 0x02: "unknown connection identifier"
        case 0x03: "hardware failure"
        case 0x05: "authentication failure"
        case 0x06: "PIN or key missing"
        case 0x07: "memory capacity exceeded"
        case 0x08: "connection timeout"
        case 0x09: "connection limit exceeded"
        case 0x0B: "connection already exists"
        case 0x0C: "command disallowed"
        case 0x0D: "connection rejected, limited resources"
        case 0x11: "unsupported feature or parameter value"
        case 0x12: "invalid HCI command parameters"
        case 0x13: "remote user terminated connection"
        case 0x14: "remote device terminated connection, low resources"
        case 0x15: "remote device terminated connection, power off"
        case 0x16: "connection terminated by local host"
        case 0x1A: "unsupported remote feature"
        case 0x1E: "invalid LMP or LL parameters"
        case 0x1F: "unspecified error"
        case 0x22: "LMP or LL response timeout"
        case 0x28: "instant passed"
        case 0x3A: "controller busy"
        case 0x3B: "unacceptable connection parameters"
        case 0x3D: "connection terminated, MIC failure"
        case 0x3E: "connection failed to be established"
        case 0x44: "operation cancelled by host"
        default: nil
        }
    }

    /// `0x13 remote user terminated connection`; `0x2F` alone for codes without a name.
    public var description: String {
        let number = "0x" + (rawValue < 0x10 ? "0" : "") + String(rawValue, radix: 16, uppercase: true)
        return name.map { "\(number) \($0)" } ?? number
    }
}
