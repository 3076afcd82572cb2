import SMPBytes

/// An HCI command packet (Core Vol 4 Part E 5.4.1): an opcode and up to 255 bytes of parameters.
///
/// The wire form, whatever the command; ``HCICommand`` types give the parameters their meaning.
public struct HCICommandPacket: Sendable, Hashable {
    /// Which command.
    public var opcode: HCIOpcode
    /// The parameters, at most 255 bytes.
    public var parameters: [UInt8]

    /// Creates a packet.
    /// - Parameters:
    ///   - opcode: which command.
    ///   - parameters: its parameters; more than 255 bytes is a programming error (no command
    ///     has that many).
    public init(opcode: HCIOpcode, parameters: [UInt8] = []) {
        precondition(parameters.count <= 255, "HCI command parameters are at most 255 bytes")
        self.opcode = opcode
        self.parameters = parameters
    }

    /// Creates the packet of a command.
    /// - Parameter command: the command.
    public init<Command: HCICommand>(_ command: Command) {
        var writer = ByteWriter()
        command.writeParameters(to: &writer)
        self.init(opcode: Command.opcode, parameters: writer.bytes)
    }

    /// Parses a command packet (without its H4 indicator).
    /// - Parameter bytes: opcode (2 bytes, little-endian), length (1 byte), parameters.
    /// - Throws: ``HCIError`` `.malformedPacket` if the header is short or the length does not
    ///   match the bytes.
    public init(bytes: some Collection<UInt8>) throws(HCIError) {
        var reader = HCIParameterReader(bytes, packet: "HCI command packet")
        let opcode = HCIOpcode(rawValue: try reader.readUInt16("Opcode"))
        let length = Int(try reader.readUInt8("Parameter_Total_Length"))
        guard reader.readableBytes == length else {
            throw HCIError(
                .malformedPacket,
                "HCI command packet \(opcode): length \(length), but \(reader.readableBytes) parameter bytes"
            )
        }
        self.opcode = opcode
        self.parameters = reader.readRest()
    }

    /// The packet's bytes (without an H4 indicator).
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 3 + parameters.count)
        writer.writeInteger(opcode.rawValue, endianness: .little)
        writer.writeByte(UInt8(parameters.count))
        writer.writeBytes(parameters)
        return writer.bytes
    }

    /// The command this packet carries, parsed.
    /// - Parameter type: the command type; its opcode must be this packet's.
    /// - Returns: the command.
    /// - Throws: ``HCIError`` `.malformedPacket` if the opcode differs or the parameters are not
    ///   that command's.
    public func command<Command: HCICommand>(as type: Command.Type) throws(HCIError) -> Command {
        guard opcode == Command.opcode else {
            throw HCIError(
                .malformedPacket,
                "a packet with opcode \(opcode) is not \(Command.name) (\(Command.opcode))"
            )
        }
        return try Command(parameters: parameters)
    }
}

/// How a controller answers a command.
public enum HCICommandAnswer: Sendable, Hashable {
    /// With a Command Complete event carrying the command's return parameters.
    case commandComplete
    /// With a Command Status event; the outcome comes later in an event of its own (LE Create
    /// Connection → LE Connection Complete, Disconnect → Disconnection Complete).
    case commandStatus
}

/// A command this host sends, with its parameters and the return parameters its Command
/// Complete carries.
///
/// ## Implementing
/// A conforming type names its opcode, writes its parameters little-endian in the specification's
/// order, and parses them back strictly (used by tests and by anything that plays a controller).
public protocol HCICommand: Sendable, Hashable {
    /// The return parameters after the status in this command's Command Complete.
    associatedtype ReturnParameters: HCIReturnParameters = HCINoReturnParameters
    /// The command's opcode.
    static var opcode: HCIOpcode { get }
    /// The command's name in the specification, for messages.
    static var name: String { get }
    /// How the controller answers it.
    static var answer: HCICommandAnswer { get }
    /// Parses the command's parameters.
    /// - Parameter parameters: the parameter bytes, exactly.
    /// - Throws: ``HCIError`` `.malformedPacket` if they are not this command's.
    init(parameters: [UInt8]) throws(HCIError)
    /// Writes the command's parameters.
    /// - Parameter writer: where to append them.
    func writeParameters(to writer: inout ByteWriter)
}

extension HCICommand {
    /// Most commands are answered with a Command Complete.
    public static var answer: HCICommandAnswer { .commandComplete }
}

/// A command without parameters.
public protocol HCIParameterlessCommand: HCICommand {
    /// Creates the command.
    init()
}

extension HCIParameterlessCommand {
    public init(parameters: [UInt8]) throws(HCIError) {
        guard parameters.isEmpty else {
            throw HCIError(.malformedPacket, "\(Self.name) has no parameters, got \(parameters.count) bytes")
        }
        self.init()
    }

    public func writeParameters(to writer: inout ByteWriter) {}
}

/// The return parameters of a command's Command Complete, after the status byte.
public protocol HCIReturnParameters: Sendable, Hashable {
    /// Parses the return parameters that follow a success status.
    /// - Parameter bytes: the bytes after the status. Bytes after the known fields are ignored:
    ///   later versions of the specification may append parameters.
    /// - Throws: ``HCIError`` `.malformedPacket` if they are too short.
    init(fields bytes: ArraySlice<UInt8>) throws(HCIError)
    /// Writes the return parameters after the status byte.
    /// - Parameter writer: where to append them.
    func writeFields(to writer: inout ByteWriter)
}

/// The return parameters of a command that returns only its status.
public struct HCINoReturnParameters: HCIReturnParameters {
    /// Creates the empty return parameters.
    public init() {}
    public init(fields bytes: ArraySlice<UInt8>) throws(HCIError) {}
    public func writeFields(to writer: inout ByteWriter) {}
}
