import Foundation

/// Crash management, group 5: make the device crash on purpose, to test fault handling and
/// core dumps. Apache Mynewt only.
///
/// Spec: `smp-protocol.md` §2 (Mynewt command ids; the Zephyr doc table calls group 5 "run-time
/// tests", the C enum and Mynewt call it crash) with the key of Mynewt `crash_test` as sent by
/// `newtmgr` (`nmxact/nmp/crash.go`). Mynewt answers with v1 envelopes only.
public enum CrashManagement: SMPManagementGroup {
    /// Group 5.
    public static let group = SMPGroup.crash

    /// No group table: only the two codes every group shares.
    public static let returnCodeNames = ["OK", "UNKNOWN"]

    /// This group's return code (never sent in a v2 `err` by Mynewt).
    public typealias ReturnCode = SMPGroupReturnCode<CrashManagement>

    /// Command 0, trigger: crash the device in the given way. A device that crashes sends no
    /// answer; an unknown type is refused with v1 `EINVAL`.
    public struct Trigger: SMPWriteRequest, Hashable {
        /// Never sent again automatically: a crash the device performs at once; sending it twice crashes it twice.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .crash }
        public static var command: UInt8 { 0 }

        /// The kind of crash (wire key `t`, required): `div0`, `jump0`, `ref0`, `assert` or
        /// `wdog` in Mynewt.
        public var type: String

        /// Creates the request.
        /// - Parameter type: the kind of crash.
        public init(type: String) { self.type = type }

        enum CodingKeys: String, CodingKey { case type = "t" }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }
}

extension SMPGroupReturnCode where Group == CrashManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
}
