import Foundation

/// File-system management, group 8: download, upload, status, hash/checksum and close.
///
/// Spec: `smp-protocol.md` §8 (commands) and §3.4 (`fs_mgmt_err_code_t`).
///
/// The protocol is stateless: the client tracks its position and sends the offset with every
/// chunk; the device keeps the file open between chunks until an idle timeout, another
/// transport's use, or ``Close``. Unlike image upload, an upload chunk at the wrong offset is
/// refused with `FILE_OFFSET_NOT_VALID`, and that error reply also carries `len`, the file's
/// current size.
public enum FileManagement: SMPManagementGroup {
    /// Group 8.
    public static let group = SMPGroup.fileSystem

    /// `fs_mgmt_err_code_t` names without the `FS_MGMT_ERR_` prefix, by value.
    public static let returnCodeNames = [
        "OK", "UNKNOWN", "FILE_INVALID_NAME", "FILE_NOT_FOUND", "FILE_IS_DIRECTORY", "FILE_OPEN_FAILED",
        "FILE_SEEK_FAILED", "FILE_READ_FAILED", "FILE_TRUNCATE_FAILED", "FILE_DELETE_FAILED", "FILE_WRITE_FAILED",
        "FILE_OFFSET_NOT_VALID", "FILE_OFFSET_LARGER_THAN_FILE", "CHECKSUM_HASH_NOT_FOUND", "MOUNT_POINT_NOT_FOUND",
        "READ_ONLY_FILESYSTEM", "FILE_EMPTY", "FILE_CLOSE_FAILED",
    ]

    /// This group's SMP v2 return code (`err.rc` when `err.group` is 8).
    public typealias ReturnCode = SMPGroupReturnCode<FileManagement>

    // MARK: - Shared models

    /// A hash or checksum algorithm name. An open set: devices may offer others.
    public struct HashType: RawRepresentable, Codable, Sendable, Hashable, CustomStringConvertible {
        public let rawValue: String
        /// Creates a type from its name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// IEEE CRC32, a 4-byte number (`CONFIG_MCUMGR_GRP_FS_CHECKSUM_IEEE_CRC32`).
        public static let crc32 = HashType(rawValue: "crc32")
        /// SHA-256, 32 bytes (`CONFIG_MCUMGR_GRP_FS_HASH_SHA256`).
        public static let sha256 = HashType(rawValue: "sha256")

        public var description: String { rawValue }
    }

    /// The result of a hash or checksum: a number for checksums (CRC32), bytes for hashes
    /// (SHA-256).
    public enum HashOutput: Codable, Sendable, Hashable {
        /// A numeric checksum (CBOR unsigned integer).
        case checksum(UInt64)
        /// A hash (CBOR byte string).
        case digest(Data)

        /// Decodes the value from its wire form (see the type and field documentation).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let bytes = try? container.decode(Data.self) {
                self = .digest(bytes)
            } else {
                self = .checksum(try container.decode(UInt64.self))
            }
        }

        /// Encodes the value in its wire form.
        public func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            switch self {
            case .checksum(let value): try container.encode(value)
            case .digest(let bytes): try container.encode(bytes)
            }
        }
    }

    // MARK: - 0 download / upload

    /// Command 0 read, download: one chunk of a file, from an offset. The device chooses the
    /// chunk size; the client asks again from the next offset until it has `len` bytes.
    public struct Download: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .fileSystem }
        public static var command: UInt8 { 0 }

        /// Offset to read from, in bytes (wire key `off`, required).
        public var offset: UInt64
        /// Absolute path of the file (wire key `name`, required).
        public var name: String

        /// Creates the request.
        /// - Parameters:
        ///   - offset: where to read from.
        ///   - name: the file's path.
        public init(offset: UInt64, name: String) {
            self.offset = offset
            self.name = name
        }

        enum CodingKeys: String, CodingKey {
            case offset = "off"
            case name
        }

        /// One chunk.
        public struct Response: Codable, Sendable, Hashable {
            /// Offset of this chunk (wire key `off`, always present).
            public var offset: UInt64
            /// The bytes read; empty at the end of the file (wire key `data`, always present).
            public var data: Data
            /// Size of the whole file in bytes (wire key `len`, only when `off` is 0).
            public var length: UInt64?

            /// Creates a response.
            public init(offset: UInt64, data: Data, length: UInt64? = nil) {
                self.offset = offset
                self.data = data
                self.length = length
            }

            enum CodingKeys: String, CodingKey {
                case offset = "off"
                case data
                case length = "len"
            }
        }
    }

    /// Command 0 write, upload: one chunk of a file. Creates or overwrites (truncates at offset
    /// 0) the file.
    public struct Upload: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .fileSystem }
        public static var command: UInt8 { 0 }

        /// Offset of this chunk, in bytes (wire key `off`, required).
        public var offset: UInt64
        /// The chunk's bytes (wire key `data`, required).
        public var data: Data
        /// Absolute path of the file (wire key `name`, required).
        public var name: String
        /// Size of the whole file in bytes (wire key `len`, required when `off` is 0).
        public var length: UInt64?

        /// Creates the request.
        /// - Parameters:
        ///   - offset: offset of the chunk.
        ///   - data: the chunk.
        ///   - name: the file's path.
        ///   - length: total size (first chunk).
        public init(offset: UInt64, data: Data, name: String, length: UInt64? = nil) {
            self.offset = offset
            self.data = data
            self.name = name
            self.length = length
        }

        enum CodingKeys: String, CodingKey {
            case offset = "off"
            case data, name
            case length = "len"
        }

        /// The device's progress.
        public struct Response: Codable, Sendable, Hashable {
            /// The offset the device expects next (wire key `off`, always present).
            public var offset: UInt64

            /// Creates a response.
            /// - Parameter offset: the next expected offset.
            public init(offset: UInt64) { self.offset = offset }

            enum CodingKeys: String, CodingKey { case offset = "off" }
        }
    }

    // MARK: - 1 status

    /// Command 1, status: the size of a file.
    public struct Status: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .fileSystem }
        public static var command: UInt8 { 1 }

        /// Absolute path of the file (wire key `name`, required).
        public var name: String

        /// Creates the request.
        /// - Parameter name: the file's path.
        public init(name: String) { self.name = name }

        /// The file's size.
        public struct Response: Codable, Sendable, Hashable {
            /// Size in bytes (wire key `len`, always present).
            public var length: UInt64

            /// Creates a response.
            /// - Parameter length: the size.
            public init(length: UInt64) { self.length = length }

            enum CodingKeys: String, CodingKey { case length = "len" }
        }
    }

    // MARK: - 2 hash / checksum

    /// Command 2, hash/checksum of a file or a range of it (`CONFIG_MCUMGR_GRP_FS_CHECKSUM_HASH`).
    public struct Hash: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .fileSystem }
        public static var command: UInt8 { 2 }

        /// Absolute path of the file (wire key `name`, required).
        public var name: String
        /// Algorithm (wire key `type`, optional; the device's default, usually `crc32`). Unknown →
        /// `CHECKSUM_HASH_NOT_FOUND`.
        public var type: HashType?
        /// Where to start, in bytes (wire key `off`, optional, default 0).
        public var offset: UInt64?
        /// How many bytes at most (wire key `len`, optional, default to the end of the file).
        public var length: UInt64?

        /// Creates the request.
        /// - Parameters:
        ///   - name: the file's path.
        ///   - type: the algorithm.
        ///   - offset: the start.
        ///   - length: the maximum length.
        public init(name: String, type: HashType? = nil, offset: UInt64? = nil, length: UInt64? = nil) {
            self.name = name
            self.type = type
            self.offset = offset
            self.length = length
        }

        enum CodingKeys: String, CodingKey {
            case name, type
            case offset = "off"
            case length = "len"
        }

        /// The hash or checksum.
        public struct Response: Codable, Sendable, Hashable {
            /// Algorithm used (wire key `type`, always present).
            public var type: HashType
            /// Start of the range (wire key `off`, only when not 0).
            public var offset: UInt64?
            /// Number of bytes hashed (wire key `len`, always present).
            public var length: UInt64
            /// The result: a number for `crc32`, bytes for `sha256` (wire key `output`, always
            /// present).
            public var output: HashOutput

            /// Creates a response.
            public init(type: HashType, offset: UInt64? = nil, length: UInt64, output: HashOutput) {
                self.type = type
                self.offset = offset
                self.length = length
                self.output = output
            }

            enum CodingKeys: String, CodingKey {
                case type
                case offset = "off"
                case length = "len"
                case output
            }
        }
    }

    // MARK: - 3 supported hash types

    /// Command 3, supported hash/checksum types
    /// (`CONFIG_MCUMGR_GRP_FS_CHECKSUM_HASH_SUPPORTED_CMD`).
    public struct SupportedHashTypes: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .fileSystem }
        public static var command: UInt8 { 3 }

        /// Creates the request (an empty map).
        public init() {}

        /// How one algorithm reports its result.
        public struct TypeInfo: Codable, Sendable, Hashable {
            /// 0: a number (`output` is an unsigned integer); 1: a byte array (wire key `format`,
            /// always present).
            public var format: Int
            /// Size of the result in bytes (wire key `size`, always present).
            public var size: UInt32

            /// Creates a type description.
            public init(format: Int, size: UInt32) {
                self.format = format
                self.size = size
            }

            /// `format` 0: the result is a number.
            public static let numericFormat = 0
            /// `format` 1: the result is a byte array.
            public static let byteArrayFormat = 1
        }

        /// The algorithm table.
        public struct Response: Codable, Sendable, Hashable {
            /// Algorithm name → description, in the device's order (wire key `types`, always
            /// present).
            public var types: SMPNamedValues<TypeInfo>

            /// Creates a response.
            public init(types: SMPNamedValues<TypeInfo>) { self.types = types }
        }
    }

    // MARK: - 4 close

    /// Command 4, close: close the file handles kept open between upload or download chunks.
    public struct Close: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .fileSystem }
        public static var command: UInt8 { 4 }

        /// Creates the request (an empty map).
        public init() {}

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }
}

extension SMPGroupReturnCode where Group == FileManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
    /// 2 FILE_INVALID_NAME: the file name is not valid.
    public static var fileInvalidName: Self { Self(rawValue: 2) }
    /// 3 FILE_NOT_FOUND: the file does not exist.
    public static var fileNotFound: Self { Self(rawValue: 3) }
    /// 4 FILE_IS_DIRECTORY: the path names a directory.
    public static var fileIsDirectory: Self { Self(rawValue: 4) }
    /// 5 FILE_OPEN_FAILED: opening the file failed.
    public static var fileOpenFailed: Self { Self(rawValue: 5) }
    /// 6 FILE_SEEK_FAILED: seeking in the file failed.
    public static var fileSeekFailed: Self { Self(rawValue: 6) }
    /// 7 FILE_READ_FAILED: reading the file failed.
    public static var fileReadFailed: Self { Self(rawValue: 7) }
    /// 8 FILE_TRUNCATE_FAILED: truncating the file failed.
    public static var fileTruncateFailed: Self { Self(rawValue: 8) }
    /// 9 FILE_DELETE_FAILED: deleting the file failed.
    public static var fileDeleteFailed: Self { Self(rawValue: 9) }
    /// 10 FILE_WRITE_FAILED: writing the file failed.
    public static var fileWriteFailed: Self { Self(rawValue: 10) }
    /// 11 FILE_OFFSET_NOT_VALID: the upload offset is not the file's size; the reply carries `len`.
    public static var fileOffsetNotValid: Self { Self(rawValue: 11) }
    /// 12 FILE_OFFSET_LARGER_THAN_FILE: the offset is beyond the end of the file.
    public static var fileOffsetLargerThanFile: Self { Self(rawValue: 12) }
    /// 13 CHECKSUM_HASH_NOT_FOUND: the hash/checksum type is not supported.
    public static var checksumHashNotFound: Self { Self(rawValue: 13) }
    /// 14 MOUNT_POINT_NOT_FOUND: no file system is mounted there.
    public static var mountPointNotFound: Self { Self(rawValue: 14) }
    /// 15 READ_ONLY_FILESYSTEM: the file system is read-only.
    public static var readOnlyFilesystem: Self { Self(rawValue: 15) }
    /// 16 FILE_EMPTY: the file is empty.
    public static var fileEmpty: Self { Self(rawValue: 16) }
    /// 17 FILE_CLOSE_FAILED: closing the file failed.
    public static var fileCloseFailed: Self { Self(rawValue: 17) }
}
