import Foundation

/// Zephyr basic management, group 63: Zephyr-specific commands (Zephyr's own groups count down
/// from 63). The only command erases the storage partition.
///
/// Spec: `smp-protocol.md` §10 (command) and §3.4 (errors). MCUboot's Zephyr port serves the same
/// command in serial recovery.
public enum ZephyrBasicManagement: SMPManagementGroup {
    /// Group 63.
    public static let group = SMPGroup.zephyrBasic

    /// Zephyr basic group error names without the `ZEPHYRBASIC_MGMT_ERR_` prefix, by value.
    public static let returnCodeNames = [
        "OK", "UNKNOWN", "FLASH_OPEN_FAILED", "FLASH_CONFIG_QUERY_FAIL", "FLASH_ERASE_FAILED",
    ]

    /// This group's SMP v2 return code (`err.rc` when `err.group` is 63).
    public typealias ReturnCode = SMPGroupReturnCode<ZephyrBasicManagement>

    /// Command 0, erase storage: erase the `storage_partition` (settings, file systems…).
    public struct EraseStorage: SMPWriteRequest, Hashable {
        /// Never sent again automatically: settings saved since are lost.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .zephyrBasic }
        public static var command: UInt8 { 0 }

        /// Creates the request (an empty map).
        public init() {}

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }
}

extension SMPGroupReturnCode where Group == ZephyrBasicManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
    /// 2 FLASH_OPEN_FAILED: opening the storage flash area failed.
    public static var flashOpenFailed: Self { Self(rawValue: 2) }
    /// 3 FLASH_CONFIG_QUERY_FAIL: querying the flash area's parameters failed.
    public static var flashConfigQueryFail: Self { Self(rawValue: 3) }
    /// 4 FLASH_ERASE_FAILED: erasing the flash area failed.
    public static var flashEraseFailed: Self { Self(rawValue: 4) }
}
