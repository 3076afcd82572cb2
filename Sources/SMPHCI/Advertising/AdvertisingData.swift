/// The type of an AD structure (Core Specification Supplement, Part A; Assigned Numbers 2.3).
/// An open set.
public struct ADType: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    /// Creates an AD type from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x01 Flags.
    public static let flags = ADType(rawValue: 0x01)
    /// 0x02 Incomplete List of 16-bit Service Class UUIDs.
    public static let incompleteServiceUUIDs16 = ADType(rawValue: 0x02)
    /// 0x03 Complete List of 16-bit Service Class UUIDs.
    public static let completeServiceUUIDs16 = ADType(rawValue: 0x03)
    /// 0x04 Incomplete List of 32-bit Service Class UUIDs.
    public static let incompleteServiceUUIDs32 = ADType(rawValue: 0x04)
    /// 0x05 Complete List of 32-bit Service Class UUIDs.
    public static let completeServiceUUIDs32 = ADType(rawValue: 0x05)
    /// 0x06 Incomplete List of 128-bit Service Class UUIDs.
    public static let incompleteServiceUUIDs128 = ADType(rawValue: 0x06)
    /// 0x07 Complete List of 128-bit Service Class UUIDs.
    public static let completeServiceUUIDs128 = ADType(rawValue: 0x07)
    /// 0x08 Shortened Local Name.
    public static let shortenedLocalName = ADType(rawValue: 0x08)
    /// 0x09 Complete Local Name.
    public static let completeLocalName = ADType(rawValue: 0x09)
    /// 0x0A TX Power Level.
    public static let txPowerLevel = ADType(rawValue: 0x0A)
    /// 0xFF Manufacturer Specific Data.
    public static let manufacturerSpecificData = ADType(rawValue: 0xFF)

    public var description: String { "0x" + hex(rawValue, digits: 2) }

    /// The UUID width of a service UUID list type, or `nil` for other types.
    var serviceUUIDWidth: Int? {
        switch rawValue {
        case 0x02, 0x03: 2
        case 0x04, 0x05: 4
        case 0x06, 0x07: 16
        default: nil
        }
    }
}

/// One AD structure: a type and its data.
public struct ADStructure: Sendable, Hashable {
    /// The AD type.
    public var type: ADType
    /// The data after the type (at most 254 bytes).
    public var data: [UInt8]

    /// Creates a structure.
    public init(type: ADType, data: [UInt8]) {
        self.type = type
        self.data = data
    }
}

/// Advertising or scan response data: a sequence of AD structures (Core Vol 3 Part C 11),
/// each a length byte, a type byte and `length - 1` data bytes.
///
/// Parsing is strict where the data cannot be trusted and lenient where the specification is:
/// a length of zero ends the significant part (what follows is padding and is ignored, as the
/// specification allows for "early termination"), while a structure that claims more bytes than
/// remain, or a known type whose data is the wrong size, is an error. Unknown types are kept.
public struct AdvertisingData: Sendable, Hashable {
    /// The structures in order.
    public var structures: [ADStructure]

    /// Creates data from structures.
    /// - Parameter structures: the structures, each with at most 254 data bytes.
    public init(structures: [ADStructure]) { self.structures = structures }

    /// Parses advertising or scan response data.
    /// - Parameter bytes: the data of an advertising report.
    /// - Throws: ``HCIError`` `.malformedAdvertisingData` when a structure overruns the data or a
    ///   known type has data of the wrong size (flags and TX power level: one byte; UUID lists: a
    ///   multiple of the UUID's width; manufacturer data: at least the two-byte company).
    public init(bytes: some Collection<UInt8>) throws(HCIError) {
        let bytes = Array(bytes)
        var structures: [ADStructure] = []
        var offset = 0
        while offset < bytes.count {
            let length = Int(bytes[offset])
            if length == 0 { break }
            guard length <= bytes.count - offset - 1 else {
                throw HCIError(
                    .malformedAdvertisingData,
                    "the AD structure at offset \(offset) claims \(length) bytes, "
                        + "but \(bytes.count - offset - 1) remain of \(bytes.count)"
                )
            }
            let structure = ADStructure(
                type: ADType(rawValue: bytes[offset + 1]),
                data: Array(bytes[(offset + 2)..<(offset + 1 + length)])
            )
            try Self.validate(structure, at: offset)
            structures.append(structure)
            offset += 1 + length
        }
        self.structures = structures
    }

    private static func validate(_ structure: ADStructure, at offset: Int) throws(HCIError) {
        let count = structure.data.count
        let problem: String? =
            switch structure.type {
            case .flags, .txPowerLevel: count == 1 ? nil : "\(count) bytes, not 1"
            case .manufacturerSpecificData: count >= 2 ? nil : "\(count) bytes, fewer than the company's 2"
            default:
                structure.type.serviceUUIDWidth.flatMap { width in
                    count % width == 0 ? nil : "\(count) bytes, not a multiple of \(width)"
                }
            }
        if let problem {
            throw HCIError(
                .malformedAdvertisingData,
                "the AD structure of type \(structure.type) at offset \(offset) has \(problem)"
            )
        }
    }

    /// The bytes: each structure as its length, type and data.
    public func encoded() -> [UInt8] {
        structures.flatMap { [UInt8(truncatingIfNeeded: $0.data.count + 1), $0.type.rawValue] + $0.data }
    }

    /// The data of the first structure of a type.
    /// - Parameter type: the AD type.
    /// - Returns: its data, or `nil` if there is none.
    public func first(_ type: ADType) -> [UInt8]? {
        structures.first { $0.type == type }?.data
    }

    /// The flags (bit 0 LE Limited Discoverable, bit 1 LE General Discoverable, bit 2 BR/EDR
    /// not supported), if present.
    public var flags: UInt8? { first(.flags)?.first }

    /// The complete local name, else the shortened one; invalid UTF-8 is repaired.
    public var localName: String? {
        (first(.completeLocalName) ?? first(.shortenedLocalName)).map { String(decoding: $0, as: UTF8.self) }
    }

    /// Whether ``localName`` is the complete name (not a shortened one).
    public var hasCompleteLocalName: Bool { first(.completeLocalName) != nil }

    /// The TX power level in dBm, if present.
    public var txPowerLevel: Int8? { first(.txPowerLevel)?.first.map { Int8(bitPattern: $0) } }

    /// Every service UUID of every list, complete or incomplete, 16, 32 and 128-bit, in order.
    public var serviceUUIDs: [BluetoothUUID] {
        structures.flatMap { structure -> [BluetoothUUID] in
            guard let width = structure.type.serviceUUIDWidth else { return [] }
            return stride(from: 0, to: structure.data.count - width + 1, by: width).compactMap {
                BluetoothUUID(littleEndianBytes: structure.data[$0..<$0 + width])
            }
        }
    }

    /// The manufacturer specific data: the company identifier and the bytes after it, per
    /// structure.
    public var manufacturerData: [(company: UInt16, data: [UInt8])] {
        structures.filter { $0.type == .manufacturerSpecificData && $0.data.count >= 2 }.map {
            (UInt16($0.data[0]) | UInt16($0.data[1]) << 8, Array($0.data[2...]))
        }
    }
}
