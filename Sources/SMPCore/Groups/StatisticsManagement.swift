import Foundation

/// Statistics management, group 2: named groups of counters the firmware defines (Zephyr
/// `STATS_SECT_*`, Mynewt `stats`).
///
/// Spec: `smp-protocol.md` §6 (commands) and §3.4 (errors).
public enum StatisticsManagement: SMPManagementGroup {
    /// Group 2.
    public static let group = SMPGroup.statistics

    /// `stat_mgmt_err_code_t` names without the `STAT_MGMT_ERR_` prefix, by value.
    public static let returnCodeNames = [
        "OK", "UNKNOWN", "INVALID_GROUP", "INVALID_STAT_NAME", "INVALID_STAT_SIZE", "WALK_ABORTED",
    ]

    /// This group's SMP v2 return code (`err.rc` when `err.group` is 2).
    public typealias ReturnCode = SMPGroupReturnCode<StatisticsManagement>

    /// Command 0, group data: the counters of one statistics group.
    public struct GroupData: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .statistics }
        public static var command: UInt8 { 0 }

        /// Name of the statistics group (wire key `name`, required); unknown → `INVALID_GROUP`.
        public var name: String

        /// Creates the request.
        /// - Parameter name: the statistics group.
        public init(name: String) { self.name = name }

        /// The group's counters.
        public struct Response: Codable, Sendable, Hashable {
            /// The statistics group's name (wire key `name`, always present).
            public var name: String
            /// Counter name → value, in the device's order (wire key `fields`, always present).
            public var fields: SMPNamedValues<UInt64>

            /// Creates a response.
            /// - Parameters:
            ///   - name: the group name.
            ///   - fields: the counters.
            public init(name: String, fields: SMPNamedValues<UInt64>) {
                self.name = name
                self.fields = fields
            }
        }
    }

    /// Command 1, list groups: the names of every statistics group.
    public struct ListGroups: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .statistics }
        public static var command: UInt8 { 1 }

        /// Creates the request (an empty map).
        public init() {}

        /// The group names.
        public struct Response: Codable, Sendable, Hashable {
            /// Statistics group names, possibly empty (wire key `stat_list`, always present).
            public var groups: [String]

            /// Creates a response.
            /// - Parameter groups: the names.
            public init(groups: [String]) { self.groups = groups }

            enum CodingKeys: String, CodingKey { case groups = "stat_list" }
        }
    }
}

extension SMPGroupReturnCode where Group == StatisticsManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
    /// 2 INVALID_GROUP: no statistics group has that name.
    public static var invalidGroup: Self { Self(rawValue: 2) }
    /// 3 INVALID_STAT_NAME: no statistic has that name.
    public static var invalidStatName: Self { Self(rawValue: 3) }
    /// 4 INVALID_STAT_SIZE: the statistic's size cannot be handled.
    public static var invalidStatSize: Self { Self(rawValue: 4) }
    /// 5 WALK_ABORTED: walking the statistics was aborted.
    public static var walkAborted: Self { Self(rawValue: 5) }
}
