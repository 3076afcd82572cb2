import Foundation

/// Enumeration management, group 10: which SMP groups the device supports.
///
/// Spec: `smp-protocol.md` §10 (commands, all reads) and §3.4 (errors). Group ids are carried as
/// `UInt16` wire values; the `…Groups` computed properties give them as ``SMPGroup``.
public enum EnumerationManagement: SMPManagementGroup {
    /// Group 10.
    public static let group = SMPGroup.enumeration

    /// Enumeration group error names without the `ENUM_MGMT_ERR_` prefix, by value.
    public static let returnCodeNames = [
        "OK", "UNKNOWN", "TOO_MANY_GROUP_ENTRIES", "INSUFFICIENT_HEAP_FOR_ENTRIES", "INDEX_TOO_LARGE",
    ]

    /// This group's SMP v2 return code (`err.rc` when `err.group` is 10).
    public typealias ReturnCode = SMPGroupReturnCode<EnumerationManagement>

    /// Command 0, count: the number of supported groups.
    public struct GroupCount: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .enumeration }
        public static var command: UInt8 { 0 }

        /// Creates the request (an empty map).
        public init() {}

        /// The count.
        public struct Response: Codable, Sendable, Hashable {
            /// Number of groups the device supports (wire key `count`, always present).
            public var count: UInt32

            /// Creates a response.
            /// - Parameter count: the number of groups.
            public init(count: UInt32) { self.count = count }
        }
    }

    /// Command 1, list: the ids of every supported group.
    public struct ListGroups: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .enumeration }
        public static var command: UInt8 { 1 }

        /// Creates the request (an empty map).
        public init() {}

        /// The group ids.
        public struct Response: Codable, Sendable, Hashable {
            /// Supported group ids (wire key `groups`, always present).
            public var groups: [UInt16]

            /// Creates a response.
            /// - Parameter groups: the group ids.
            public init(groups: [UInt16]) { self.groups = groups }

            /// The ids as groups.
            public var supportedGroups: [SMPGroup] { groups.map(SMPGroup.init(rawValue:)) }
        }
    }

    /// Command 2, single group: the id of the group at an index, to list groups one by one.
    public struct GroupAtIndex: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .enumeration }
        public static var command: UInt8 { 2 }

        /// 0-based index (wire key `index`, optional, default 0); past the last group →
        /// `INDEX_TOO_LARGE`.
        public var index: UInt32?

        /// Creates the request.
        /// - Parameter index: the index, or `nil` for the first group.
        public init(index: UInt32? = nil) { self.index = index }

        /// The group at that index.
        public struct Response: Codable, Sendable, Hashable {
            /// The group id (wire key `group`, always present).
            public var group: UInt16
            /// `true` on the last group (wire key `end`, only sent then).
            public var end: Bool?

            /// Creates a response.
            /// - Parameters:
            ///   - group: the group id.
            ///   - end: whether it is the last one.
            public init(group: UInt16, end: Bool? = nil) {
                self.group = group
                self.end = end
            }

            /// `end`, absent read as false.
            public var isLast: Bool { end ?? false }
        }
    }

    /// Command 3, details: name and handler count of some or all groups
    /// (`CONFIG_MCUMGR_GRP_ENUM_DETAILS`).
    public struct GroupDetails: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .enumeration }
        public static var command: UInt8 { 3 }

        /// The group ids to describe (wire key `groups`, optional; all groups when absent).
        public var groups: [UInt16]?

        /// Creates the request.
        /// - Parameter groups: the groups, or `nil` for all.
        public init(groups: [UInt16]? = nil) { self.groups = groups }

        /// The details of one group.
        public struct Details: Codable, Sendable, Hashable {
            /// The group id (wire key `group`, always present).
            public var group: UInt16
            /// The group's name (wire key `name`, with `CONFIG_MCUMGR_GRP_ENUM_DETAILS_NAME`).
            public var name: String?
            /// Number of command handlers (wire key `handlers`, with
            /// `CONFIG_MCUMGR_GRP_ENUM_DETAILS_HANDLERS`).
            public var handlers: UInt32?

            /// Creates a group description.
            public init(group: UInt16, name: String? = nil, handlers: UInt32? = nil) {
                self.group = group
                self.name = name
                self.handlers = handlers
            }
        }

        /// The descriptions.
        public struct Response: Codable, Sendable, Hashable {
            /// One entry per requested and supported group (wire key `groups`, always present).
            public var groups: [Details]

            /// Creates a response.
            /// - Parameter groups: the descriptions.
            public init(groups: [Details]) { self.groups = groups }
        }
    }
}

extension SMPGroupReturnCode where Group == EnumerationManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
    /// 2 TOO_MANY_GROUP_ENTRIES: more group ids requested than the device can handle.
    public static var tooManyGroupEntries: Self { Self(rawValue: 2) }
    /// 3 INSUFFICIENT_HEAP_FOR_ENTRIES: not enough heap to hold the requested ids.
    public static var insufficientHeapForEntries: Self { Self(rawValue: 3) }
    /// 4 INDEX_TOO_LARGE: the index is past the last group.
    public static var indexTooLarge: Self { Self(rawValue: 4) }
}
