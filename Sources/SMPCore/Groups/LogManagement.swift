import Foundation

/// Log management, group 4: reading and clearing the device's logs. Apache Mynewt only; Zephyr
/// does not implement this group.
///
/// Spec: `smp-protocol.md` §2 (Mynewt command ids) with the keys of Mynewt `log_nmgr` as read by
/// `newtmgr` (`nmxact/nmp/log.go`). Mynewt answers with v1 envelopes only (a `rc` in every
/// response, 0 on success), so the group has no v2 table of its own. Command 2 (append) is
/// defined in `newtmgr` but has no documented payload and no server implementation, so it has
/// no type here.
public enum LogManagement: SMPManagementGroup {
    /// Group 4.
    public static let group = SMPGroup.log

    /// No group table: only the two codes every group shares.
    public static let returnCodeNames = ["OK", "UNKNOWN"]

    /// This group's return code (never sent in a v2 `err` by Mynewt).
    public typealias ReturnCode = SMPGroupReturnCode<LogManagement>

    /// The text or bytes of a log entry: Mynewt sends string entries as CBOR text and CBOR or
    /// binary entries as a byte string.
    public enum Message: Codable, Sendable, Hashable {
        /// A string entry (CBOR text).
        case text(String)
        /// A CBOR or binary entry (CBOR byte string).
        case bytes(Data)

        /// Decodes the value from its wire form (see the type and field documentation).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let text = try? container.decode(String.self) {
                self = .text(text)
            } else {
                self = .bytes(try container.decode(Data.self))
            }
        }

        /// Encodes the value in its wire form.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .text(let text): try container.encode(text)
            case .bytes(let bytes): try container.encode(bytes)
            }
        }
    }

    /// Command 0, show: entries of one log, or of every log, from an index or a time.
    public struct Show: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .log }
        public static var command: UInt8 { 0 }

        /// Name of the log (wire key `log_name`, optional; every log when absent).
        public var logName: String?
        /// Only entries at or after this time, in microseconds (wire key `ts`, optional).
        public var timestamp: Int64?
        /// Only entries at or after this index (wire key `index`, optional).
        public var index: UInt32?

        /// Creates the request.
        /// - Parameters:
        ///   - logName: the log, or `nil` for all.
        ///   - timestamp: the earliest time.
        ///   - index: the first index.
        public init(logName: String? = nil, timestamp: Int64? = nil, index: UInt32? = nil) {
            self.logName = logName
            self.timestamp = timestamp
            self.index = index
        }

        enum CodingKeys: String, CodingKey {
            case logName = "log_name"
            case timestamp = "ts"
            case index
        }

        /// One log entry.
        public struct Entry: Codable, Sendable, Hashable {
            /// The entry's text or bytes (wire key `msg`, always present).
            public var message: Message
            /// Time of the entry in microseconds (wire key `ts`, always present).
            public var timestamp: Int64
            /// Log level: 0 debug, 1 info, 2 warn, 3 error, 4 critical (wire key `level`).
            public var level: UInt8
            /// Entry index (wire key `index`, always present).
            public var index: UInt32
            /// Module id, e.g. 1 OS, 2 newtmgr (wire key `module`, always present).
            public var module: UInt8
            /// Entry type as text: `str`, `cbor` or `bin` (wire key `type`, newer Mynewt).
            public var type: String?
            /// Leading bytes of the image hash that wrote the entry (wire key `imghash`, optional).
            public var imageHash: Data?

            /// Creates an entry.
            public init(
                message: Message,
                timestamp: Int64,
                level: UInt8,
                index: UInt32,
                module: UInt8,
                type: String? = nil,
                imageHash: Data? = nil
            ) {
                self.message = message
                self.timestamp = timestamp
                self.level = level
                self.index = index
                self.module = module
                self.type = type
                self.imageHash = imageHash
            }

            enum CodingKeys: String, CodingKey {
                case message = "msg"
                case timestamp = "ts"
                case level, index, module, type
                case imageHash = "imghash"
            }
        }

        /// One log and its entries.
        public struct Log: Codable, Sendable, Hashable {
            /// Log name (wire key `name`, always present).
            public var name: String
            /// Log type: 0 stream, 1 memory, 2 storage (wire key `type`, always present).
            public var type: Int
            /// The entries (wire key `entries`, always present).
            public var entries: [Entry]

            /// Creates a log.
            public init(name: String, type: Int, entries: [Entry]) {
                self.name = name
                self.type = type
                self.entries = entries
            }
        }

        /// The logs.
        public struct Response: Codable, Sendable, Hashable {
            /// Index to ask for next to continue reading (wire key `next_index`, always present).
            public var nextIndex: UInt32
            /// The logs read (wire key `logs`, always present).
            public var logs: [Log]

            /// Creates a response.
            public init(nextIndex: UInt32, logs: [Log]) {
                self.nextIndex = nextIndex
                self.logs = logs
            }

            enum CodingKeys: String, CodingKey {
                case nextIndex = "next_index"
                case logs
            }
        }
    }

    /// Command 1, clear: erase every log.
    public struct Clear: SMPWriteRequest, Hashable {
        /// Never sent again automatically: a second clear loses what was logged in between.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .log }
        public static var command: UInt8 { 1 }

        /// Creates the request (an empty map).
        public init() {}

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    /// Command 3, module list: the log module names and their ids.
    public struct ModuleList: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .log }
        public static var command: UInt8 { 3 }

        /// Creates the request (an empty map).
        public init() {}

        /// The module table.
        public struct Response: Codable, Sendable, Hashable {
            /// Module name → id, in the device's order (wire key `module_map`, always present).
            public var modules: SMPNamedValues<Int>

            /// Creates a response.
            public init(modules: SMPNamedValues<Int>) { self.modules = modules }

            enum CodingKeys: String, CodingKey { case modules = "module_map" }
        }
    }

    /// Command 4, level list: the log level names and their values.
    public struct LevelList: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .log }
        public static var command: UInt8 { 4 }

        /// Creates the request (an empty map).
        public init() {}

        /// The level table.
        public struct Response: Codable, Sendable, Hashable {
            /// Level name → value, in the device's order (wire key `level_map`, always present).
            public var levels: SMPNamedValues<Int>

            /// Creates a response.
            public init(levels: SMPNamedValues<Int>) { self.levels = levels }

            enum CodingKeys: String, CodingKey { case levels = "level_map" }
        }
    }

    /// Command 5, list: the names of the device's logs.
    public struct List: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .log }
        public static var command: UInt8 { 5 }

        /// Creates the request (an empty map).
        public init() {}

        /// The log names.
        public struct Response: Codable, Sendable, Hashable {
            /// Log names (wire key `log_list`, always present).
            public var logNames: [String]

            /// Creates a response.
            public init(logNames: [String]) { self.logNames = logNames }

            enum CodingKeys: String, CodingKey { case logNames = "log_list" }
        }
    }
}

extension SMPGroupReturnCode where Group == LogManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
}
