/// A range of attribute handles, both ends included. A request's range must start at 1 or later
/// and not end before it starts; decoding enforces both.
public struct ATTHandleRange: Sendable, Hashable, CustomStringConvertible {
    /// The first handle.
    public var start: UInt16
    /// The last handle.
    public var end: UInt16

    /// Creates a range.
    /// - Parameters:
    ///   - start: the first handle.
    ///   - end: the last handle.
    public init(start: UInt16, end: UInt16) {
        self.start = start
        self.end = end
    }

    /// Every handle, 0x0001–0xFFFF.
    public static let all = ATTHandleRange(start: 0x0001, end: 0xFFFF)

    /// Whether the range is one a request may carry: start ≠ 0 and start ≤ end.
    public var isValid: Bool { start != 0 && start <= end }

    /// Whether the range holds the handle.
    /// - Parameter handle: the handle.
    public func contains(_ handle: UInt16) -> Bool { start <= handle && handle <= end }

    /// `0x0001–0xFFFF`.
    public var description: String { "0x\(hex(start, digits: 4))–0x\(hex(end, digits: 4))" }
}

/// An attribute handle with a value: an entry of a Read By Type Response.
public struct ATTHandleValue: Sendable, Hashable {
    /// The attribute's handle.
    public var handle: UInt16
    /// Its value (or the first part of it).
    public var value: [UInt8]

    /// Creates an entry.
    /// - Parameters:
    ///   - handle: the attribute's handle.
    ///   - value: its value.
    public init(handle: UInt16, value: [UInt8]) {
        self.handle = handle
        self.value = value
    }
}

/// A group (a service) with its value: an entry of a Read By Group Type Response.
public struct ATTGroupValue: Sendable, Hashable {
    /// The handles of the group: its declaration and its last attribute.
    public var range: ATTHandleRange
    /// The declaration's value (a service's UUID).
    public var value: [UInt8]

    /// Creates an entry.
    /// - Parameters:
    ///   - range: the group's handles.
    ///   - value: the declaration's value.
    public init(range: ATTHandleRange, value: [UInt8]) {
        self.range = range
        self.value = value
    }
}

/// The entries of a Find Information Response, all in one of the two formats the PDU allows.
public enum ATTFindInformationData: Sendable, Hashable {
    /// Format 0x01: handles with 16-bit UUIDs.
    case uuid16([ATTHandleUUID16])
    /// Format 0x02: handles with 128-bit UUIDs.
    case uuid128([ATTHandleUUID128])

    /// The handle–UUID pairs, whatever the format.
    public var entries: [(handle: UInt16, uuid: BluetoothUUID)] {
        switch self {
        case .uuid16(let entries): entries.map { ($0.handle, BluetoothUUID($0.uuid)) }
        case .uuid128(let entries): entries.map { ($0.handle, $0.uuid) }
        }
    }
}

/// A handle with a 16-bit attribute type.
public struct ATTHandleUUID16: Sendable, Hashable {
    /// The attribute's handle.
    public var handle: UInt16
    /// Its type, a 16-bit UUID.
    public var uuid: UInt16

    /// Creates an entry.
    /// - Parameters:
    ///   - handle: the attribute's handle.
    ///   - uuid: its type.
    public init(handle: UInt16, uuid: UInt16) {
        self.handle = handle
        self.uuid = uuid
    }
}

/// A handle with a 128-bit attribute type.
public struct ATTHandleUUID128: Sendable, Hashable {
    /// The attribute's handle.
    public var handle: UInt16
    /// Its type, sent as 16 bytes whatever its value.
    public var uuid: BluetoothUUID

    /// Creates an entry.
    /// - Parameters:
    ///   - handle: the attribute's handle.
    ///   - uuid: its type.
    public init(handle: UInt16, uuid: BluetoothUUID) {
        self.handle = handle
        self.uuid = uuid
    }
}
