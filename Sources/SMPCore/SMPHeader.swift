import SMPBytes

/// SMP protocol version carried in bits 3–4 of the first header byte.
///
/// An open set: the two reserved values can arrive from a device and are kept, not rejected,
/// so a client can answer them with a clear error.
public struct SMPVersion: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    /// Creates a version from the two header bits (values above 3 are masked).
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x03 }

    /// SMP v1 ("legacy"): errors are a plain `rc`.
    public static let v1 = SMPVersion(rawValue: 0)
    /// SMP v2: group errors are `err {group, rc}`.
    public static let v2 = SMPVersion(rawValue: 1)

    public var description: String {
        switch self {
        case .v1: "v1"
        case .v2: "v2"
        default: "reserved(\(rawValue))"
        }
    }
}

/// SMP operation code in bits 0–2 of the first header byte.
public struct SMPOperation: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    /// Creates an operation from the three header bits (values above 7 are masked).
    public init(rawValue: UInt8) { self.rawValue = rawValue & 0x07 }

    /// Read request (0).
    public static let read = SMPOperation(rawValue: 0)
    /// Read response (1).
    public static let readResponse = SMPOperation(rawValue: 1)
    /// Write request (2).
    public static let write = SMPOperation(rawValue: 2)
    /// Write response (3).
    public static let writeResponse = SMPOperation(rawValue: 3)

    /// Whether this is one of the two defined responses.
    public var isResponse: Bool { self == .readResponse || self == .writeResponse }

    /// The response operation for a request (request + 1), or `nil` for anything but a request.
    public var response: SMPOperation? {
        switch self {
        case .read: .readResponse
        case .write: .writeResponse
        default: nil
        }
    }

    public var description: String {
        switch self {
        case .read: "read"
        case .readResponse: "read-response"
        case .write: "write"
        case .writeResponse: "write-response"
        default: "op(\(rawValue))"
        }
    }
}

/// The 8-byte SMP header (all multi-byte fields big-endian).
///
/// ```
/// byte 0: res(3) ver(2) op(3) | byte 1: flags | 2–3: payload length | 4–5: group | 6: seq | 7: command
/// ```
public struct SMPHeader: Sendable, Hashable {
    /// Size of the header on the wire.
    public static let size = 8

    /// Protocol version.
    public var version: SMPVersion
    /// Operation.
    public var operation: SMPOperation
    /// Flags byte; no flags are defined, senders use 0.
    public var flags: UInt8
    /// Length of the CBOR payload that follows the header (the header itself not included).
    public var length: UInt16
    /// Management group.
    public var group: SMPGroup
    /// Sequence number, copied by the server from request to response; wraps at 255.
    public var sequence: UInt8
    /// Command within the group.
    public var command: UInt8
    /// The three reserved high bits of byte 0, kept so a decoded header re-encodes exactly.
    public var reserved: UInt8

    /// Creates a header.
    /// - Parameters:
    ///   - version: protocol version.
    ///   - operation: operation.
    ///   - flags: flags byte, normally 0.
    ///   - length: payload length.
    ///   - group: management group.
    ///   - sequence: sequence number.
    ///   - command: command id.
    public init(
        version: SMPVersion = .v2,
        operation: SMPOperation,
        flags: UInt8 = 0,
        length: UInt16,
        group: SMPGroup,
        sequence: UInt8,
        command: UInt8
    ) {
        self.version = version
        self.operation = operation
        self.flags = flags
        self.length = length
        self.group = group
        self.sequence = sequence
        self.command = command
        self.reserved = 0
    }

    /// Parses a header from the first 8 bytes.
    /// - Parameter bytes: at least 8 bytes; only the first 8 are read.
    /// - Throws: ``SMPError`` `.truncatedHeader` if fewer than 8 bytes are given.
    public init(parsing bytes: some Collection<UInt8>) throws(SMPError) {
        try self.init(parsingArray: bytes as? [UInt8] ?? Array(bytes.prefix(SMPHeader.size)))
    }

    /// Parses from an array without copying it (the frame path).
    init(parsingArray bytes: [UInt8]) throws(SMPError) {
        var reader = ByteReader(bytes)
        guard
            let first = reader.readInteger(endianness: .big, as: UInt8.self),
            let flags = reader.readInteger(endianness: .big, as: UInt8.self),
            let length = reader.readInteger(endianness: .big, as: UInt16.self),
            let group = reader.readInteger(endianness: .big, as: UInt16.self),
            let sequence = reader.readInteger(endianness: .big, as: UInt8.self),
            let command = reader.readInteger(endianness: .big, as: UInt8.self)
        else {
            throw SMPError(.truncatedHeader, "an SMP header needs 8 bytes, got \(bytes.count)")
        }
        self.reserved = first >> 5
        self.version = SMPVersion(rawValue: (first >> 3) & 0x03)
        self.operation = SMPOperation(rawValue: first & 0x07)
        self.flags = flags
        self.length = length
        self.group = SMPGroup(rawValue: group)
        self.sequence = sequence
        self.command = command
    }

    /// Appends the 8 header bytes.
    /// - Parameter writer: the destination.
    public func write(into writer: inout ByteWriter) {
        writer.writeInteger(reserved << 5 | version.rawValue << 3 | operation.rawValue, endianness: .big)
        writer.writeInteger(flags, endianness: .big)
        writer.writeInteger(length, endianness: .big)
        writer.writeInteger(group.rawValue, endianness: .big)
        writer.writeInteger(sequence, endianness: .big)
        writer.writeInteger(command, endianness: .big)
    }

    /// The 8 header bytes.
    public var bytes: [UInt8] {
        var writer = ByteWriter(capacity: SMPHeader.size)
        write(into: &writer)
        return writer.bytes
    }
}
