import SMPCBOR

/// The device answered, and its answer was "no".
///
/// Built from the response's error envelope: a v1 `rc` (with an optional `rsn` reason), a v2
/// `err {group, rc}`, or the `ret {group, rc}` that nRF Connect SDK 2.4 sent. Any non-zero code
/// is an error, including codes no table knows.
public struct SMPDeviceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Which kind of code the device sent.
    public enum Status: Sendable, Hashable {
        /// A management-layer code (v1 `rc`, also used by v2 servers for SMP-layer failures).
        case management(SMPReturnCode)
        /// A group's own code (v2 `err`); `group` is the group named in the envelope.
        case group(SMPGroup, Int)
    }

    /// The code the device sent.
    public var status: Status
    /// The group of the request that was refused.
    public var requestGroup: SMPGroup
    /// The command of the request that was refused.
    public var command: UInt8
    /// The device's human-readable reason (`rsn`), when verbose errors are enabled on it.
    public var reason: String?
    /// The whole response payload, for the few errors that carry data: the FS group's
    /// FILE_OFFSET_NOT_VALID answer includes `len`, the file's current length.
    public var payload: CBOR?

    /// Creates a device error.
    /// - Parameters:
    ///   - status: the code the device sent.
    ///   - requestGroup: group of the refused request.
    ///   - command: command of the refused request.
    ///   - reason: the device's `rsn` text, if any.
    ///   - payload: the whole response payload.
    public init(_ status: Status, requestGroup: SMPGroup, command: UInt8, reason: String? = nil, payload: CBOR? = nil) {
        self.status = status
        self.requestGroup = requestGroup
        self.command = command
        self.reason = reason
        self.payload = payload
    }

    /// The management-layer code, when the device sent one.
    public var returnCode: SMPReturnCode? {
        if case .management(let rc) = status { rc } else { nil }
    }

    /// Whether the device sent exactly this group return code.
    /// - Parameter code: a typed group code, e.g. `ImageManagement.ReturnCode.noFreeSlot`.
    /// - Returns: `true` if the envelope was `err {group: G, rc: code}`.
    public func matches<G: SMPManagementGroup>(_ code: SMPGroupReturnCode<G>) -> Bool {
        status == .group(G.group, code.rawValue)
    }

    /// The code's name: `NO_FREE_SLOT` for a group code, `ENOTSUP` for a management code.
    public var codeName: String {
        switch status {
        case .management(let rc): rc.name
        case .group(let group, let rc):
            group.returnCodeNames.map { SMPGroupReturnCode<OSManagement>.name(of: rc, in: $0) } ?? "UNKNOWN_RC"
        }
    }

    /// One line naming the code: a group's own code by its group (`image error 9 NO_FREE_SLOT`),
    /// a management code — which the SMP layer sends for every group — as the device's
    /// (`device error 2 ENOMEM (out of memory)`), then the device's reason if it gave one.
    public var description: String {
        var text: String
        switch status {
        case .management(let rc):
            text = "device error \(rc.rawValue) \(rc.name)"
            if let meaning = rc.meaning { text += " (\(meaning))" }
        case .group(let group, let rc): text = "\(group.name) error \(rc) \(codeName)"
        }
        if let reason, !reason.isEmpty { text += ": \(reason)" }
        return text
    }
}
