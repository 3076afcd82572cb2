import Foundation

/// Settings management, group 3 (Zephyr `settings_mgmt`; "config" in Mynewt): read, write and
/// delete values of the settings subsystem, and commit, load and save them.
///
/// Spec: `smp-protocol.md` §7 (commands) and §3.4 (`settings_mgmt_ret_code_t`). Values are
/// opaque bytes: their type is known to the firmware and the client, not to the protocol. An
/// application access hook may refuse any of these operations.
public enum SettingsManagement: SMPManagementGroup {
    /// Group 3.
    public static let group = SMPGroup.settings

    /// `settings_mgmt_ret_code_t` names without the `SETTINGS_MGMT_ERR_` prefix, by value.
    public static let returnCodeNames = [
        "OK", "UNKNOWN", "KEY_TOO_LONG", "KEY_NOT_FOUND", "READ_NOT_SUPPORTED", "ROOT_KEY_NOT_FOUND",
        "WRITE_NOT_SUPPORTED", "DELETE_NOT_SUPPORTED",
    ]

    /// This group's SMP v2 return code (`err.rc` when `err.group` is 3).
    public typealias ReturnCode = SMPGroupReturnCode<SettingsManagement>

    /// Command 0 read: the value of one setting.
    public struct Read: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .settings }
        public static var command: UInt8 { 0 }

        /// Full name of the setting, e.g. `bt/name` (wire key `name`, required).
        public var name: String
        /// Largest value the client accepts, in bytes (wire key `max_size`, optional).
        public var maxSize: UInt32?

        /// Creates the request.
        /// - Parameters:
        ///   - name: the setting.
        ///   - maxSize: the largest value accepted.
        public init(name: String, maxSize: UInt32? = nil) {
            self.name = name
            self.maxSize = maxSize
        }

        enum CodingKeys: String, CodingKey {
            case name
            case maxSize = "max_size"
        }

        /// The value.
        public struct Response: Codable, Sendable, Hashable {
            /// The setting's bytes (wire key `val`, always present).
            public var value: Data
            /// The device's own size limit in bytes, sent when it is smaller than the requested
            /// `max_size` (wire key `max_size`, optional).
            public var maxSize: UInt32?

            /// Creates a response.
            /// - Parameters:
            ///   - value: the bytes.
            ///   - maxSize: the device's limit, if smaller than requested.
            public init(value: Data, maxSize: UInt32? = nil) {
                self.value = value
                self.maxSize = maxSize
            }

            enum CodingKeys: String, CodingKey {
                case value = "val"
                case maxSize = "max_size"
            }
        }
    }

    /// Command 0 write: set one setting (applied by the handler; persisted only by ``Save``).
    public struct Write: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .settings }
        public static var command: UInt8 { 0 }

        /// Full name of the setting (wire key `name`, required).
        public var name: String
        /// The new bytes (wire key `val`, required).
        public var value: Data

        /// Creates the request.
        /// - Parameters:
        ///   - name: the setting.
        ///   - value: the bytes.
        public init(name: String, value: Data) {
            self.name = name
            self.value = value
        }

        enum CodingKeys: String, CodingKey {
            case name
            case value = "val"
        }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    /// Command 1: delete one setting.
    public struct Delete: SMPWriteRequest, Hashable {
        /// Never sent again automatically: a second delete answers KEY_NOT_FOUND for a delete that succeeded.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .settings }
        public static var command: UInt8 { 1 }

        /// Full name of the setting (wire key `name`, required).
        public var name: String

        /// Creates the request.
        /// - Parameter name: the setting.
        public init(name: String) { self.name = name }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    /// Command 2: commit, i.e. apply every setting that was set but not yet applied.
    public struct Commit: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .settings }
        public static var command: UInt8 { 2 }

        /// Creates the request (an empty map).
        public init() {}

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    /// Command 3 read: load the settings from persistent storage.
    public struct Load: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .settings }
        public static var command: UInt8 { 3 }

        /// Creates the request (an empty map).
        public init() {}

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    /// Command 3 write: save settings to persistent storage.
    public struct Save: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .settings }
        public static var command: UInt8 { 3 }

        /// Subtree to save (wire key `name`, optional; without it everything is saved). The
        /// `smp` 4.2.0 package cannot send this key.
        public var name: String?

        /// Creates the request.
        /// - Parameter name: the subtree, or `nil` for all settings.
        public init(name: String? = nil) { self.name = name }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }
}

extension SMPGroupReturnCode where Group == SettingsManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
    /// 2 KEY_TOO_LONG: the setting name is too long.
    public static var keyTooLong: Self { Self(rawValue: 2) }
    /// 3 KEY_NOT_FOUND: no setting has that name.
    public static var keyNotFound: Self { Self(rawValue: 3) }
    /// 4 READ_NOT_SUPPORTED: the setting cannot be read.
    public static var readNotSupported: Self { Self(rawValue: 4) }
    /// 5 ROOT_KEY_NOT_FOUND: no handler for the name's root.
    public static var rootKeyNotFound: Self { Self(rawValue: 5) }
    /// 6 WRITE_NOT_SUPPORTED: the setting cannot be written.
    public static var writeNotSupported: Self { Self(rawValue: 6) }
    /// 7 DELETE_NOT_SUPPORTED: the setting cannot be deleted.
    public static var deleteNotSupported: Self { Self(rawValue: 7) }
}
