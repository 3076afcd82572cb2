import SMPBytes

/// An event code (Core Vol 4 Part E 7.7). An open set: the named ones are those this host reads.
public struct HCIEventCode: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    /// Creates an event code from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// 0x05 Disconnection Complete.
    public static let disconnectionComplete = HCIEventCode(rawValue: 0x05)
    /// 0x0E Command Complete.
    public static let commandComplete = HCIEventCode(rawValue: 0x0E)
    /// 0x0F Command Status.
    public static let commandStatus = HCIEventCode(rawValue: 0x0F)
    /// 0x10 Hardware Error.
    public static let hardwareError = HCIEventCode(rawValue: 0x10)
    /// 0x13 Number Of Completed Packets.
    public static let numberOfCompletedPackets = HCIEventCode(rawValue: 0x13)
    /// 0x1A Data Buffer Overflow.
    public static let dataBufferOverflow = HCIEventCode(rawValue: 0x1A)
    /// 0x3E LE Meta: the first parameter is the LE subevent code.
    public static let leMeta = HCIEventCode(rawValue: 0x3E)

    public var description: String { "0x" + hex(rawValue, digits: 2) }
}

/// An HCI event packet (Core Vol 4 Part E 5.4.4): an event code and up to 255 bytes of
/// parameters. The wire form; ``HCIEvent`` gives the parameters their meaning.
public struct HCIEventPacket: Sendable, Hashable {
    /// Which event.
    public var code: HCIEventCode
    /// The parameters, at most 255 bytes.
    public var parameters: [UInt8]

    /// Creates a packet.
    /// - Parameters:
    ///   - code: the event code.
    ///   - parameters: at most 255 bytes; more is a programming error.
    public init(code: HCIEventCode, parameters: [UInt8]) {
        precondition(parameters.count <= 255, "HCI event parameters are at most 255 bytes")
        self.code = code
        self.parameters = parameters
    }

    /// Parses an event packet (without its H4 indicator).
    /// - Parameter bytes: event code, length, parameters.
    /// - Throws: ``HCIError`` `.malformedPacket` if the header is short or the length does not
    ///   match the bytes.
    public init(bytes: some Collection<UInt8>) throws(HCIError) {
        var reader = HCIParameterReader(bytes, packet: "HCI event packet")
        let code = HCIEventCode(rawValue: try reader.readUInt8("Event_Code"))
        let length = Int(try reader.readUInt8("Parameter_Total_Length"))
        guard reader.readableBytes == length else {
            throw HCIError(
                .malformedPacket,
                "HCI event packet \(code): length \(length), but \(reader.readableBytes) parameter bytes"
            )
        }
        self.code = code
        self.parameters = reader.readRest()
    }

    /// The packet's bytes (without an H4 indicator).
    public func encoded() -> [UInt8] {
        [code.rawValue, UInt8(parameters.count)] + parameters
    }
}

/// The parameters of one kind of event, parsed.
///
/// ## Implementing
/// Parse the fields in the specification's order, little-endian, and ignore bytes after the
/// last known field (a later version of the specification may append some); write them back in
/// the same order, so that parsing and writing round-trip byte for byte.
public protocol HCIEventParameters: Sendable, Hashable {
    /// The event's name in the specification, for messages.
    static var name: String { get }
    /// Parses the parameters (for an LE Meta subevent: the bytes after the subevent code).
    /// - Throws: ``HCIError`` `.malformedPacket` if they are too short or their counts overrun.
    init(parameters: ArraySlice<UInt8>) throws(HCIError)
    /// Writes the parameters (for an LE Meta subevent: without the subevent code).
    func writeParameters(to writer: inout ByteWriter)
}

/// An event with an event code of its own.
public protocol HCIEventWithCode: HCIEventParameters {
    /// The event code.
    static var code: HCIEventCode { get }
}

/// An LE Meta subevent.
public protocol HCILESubevent: HCIEventParameters {
    /// The subevent code, the LE Meta event's first parameter.
    static var subeventCode: UInt8 { get }
}

extension HCIEventWithCode {
    /// The event's packet.
    public var packet: HCIEventPacket {
        var writer = ByteWriter()
        writeParameters(to: &writer)
        return HCIEventPacket(code: Self.code, parameters: writer.bytes)
    }
}

extension HCILESubevent {
    /// The LE Meta event packet that carries the subevent.
    public var packet: HCIEventPacket {
        var writer = ByteWriter()
        writer.writeByte(Self.subeventCode)
        writeParameters(to: &writer)
        return HCIEventPacket(code: .leMeta, parameters: writer.bytes)
    }
}
