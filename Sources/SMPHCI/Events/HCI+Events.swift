import SMPBytes

// The events every connection and command needs (Core Vol 4 Part E 7.7).

extension HCI {
    /// Command Complete (7.7.14): a command's outcome and return parameters, and how many
    /// commands the controller now accepts.
    public struct CommandComplete: HCIEventWithCode {
        public static let code = HCIEventCode.commandComplete
        public static let name = "Command Complete"

        /// Num_HCI_Command_Packets: how many commands the host may send now.
        public var numHCICommandPackets: UInt8
        /// Command_Opcode: the command answered (``HCIOpcode/noOperation`` for a credit alone).
        public var opcode: HCIOpcode
        /// Return_Parameters, the status byte first (empty for a no-operation).
        public var returnParameters: [UInt8]

        /// Creates the event from raw return parameters.
        public init(numHCICommandPackets: UInt8, opcode: HCIOpcode, returnParameters: [UInt8]) {
            self.numHCICommandPackets = numHCICommandPackets
            self.opcode = opcode
            self.returnParameters = returnParameters
        }

        /// Creates the successful answer to a command.
        /// - Parameters:
        ///   - numHCICommandPackets: the command credit.
        ///   - command: the command answered.
        ///   - returnParameters: its return parameters.
        public init<Command: HCICommand>(
            numHCICommandPackets: UInt8,
            command: Command.Type,
            returnParameters: Command.ReturnParameters
        ) {
            var writer = ByteWriter()
            writer.writeByte(HCIStatus.success.rawValue)
            returnParameters.writeFields(to: &writer)
            self.init(
                numHCICommandPackets: numHCICommandPackets,
                opcode: Command.opcode,
                returnParameters: writer.bytes
            )
        }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            numHCICommandPackets = try reader.readUInt8("Num_HCI_Command_Packets")
            opcode = HCIOpcode(rawValue: try reader.readUInt16("Command_Opcode"))
            returnParameters = reader.readRest()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(numHCICommandPackets)
            writer.writeInteger(opcode.rawValue, endianness: .little)
            writer.writeBytes(returnParameters)
        }

        /// The status, the first return parameter; `nil` when there are none (a no-operation).
        public var status: HCIStatus? { returnParameters.first.map { HCIStatus(rawValue: $0) } }

        /// The return parameters of the command this event answers.
        /// - Parameter command: the command that was sent.
        /// - Returns: its return parameters.
        /// - Throws: ``HCIError`` `.protocolViolation` if the event answers another command,
        ///   `.commandFailed` (with ``HCIError/status``) if the status is not success — the other
        ///   fields may then be absent, as Bumble and the specification allow —, or
        ///   `.malformedPacket` if the fields are too short.
        public func returnParameters<Command: HCICommand>(
            of command: Command.Type
        ) throws(HCIError) -> Command.ReturnParameters {
            guard opcode == Command.opcode else {
                throw HCIError(
                    .protocolViolation,
                    "a Command Complete for \(opcode) where one for \(Command.name) (\(Command.opcode)) was awaited"
                )
            }
            guard let status else {
                throw HCIError(.malformedPacket, "the Command Complete for \(Command.name) has no status")
            }
            guard status.isSuccess else {
                throw HCIError(.commandFailed, "\(Command.name): \(status)", status: status)
            }
            return try Command.ReturnParameters(fields: returnParameters.dropFirst())
        }
    }

    /// Command Status (7.7.15): a command was accepted (status 0: pending) or refused; its
    /// outcome comes in an event of its own.
    public struct CommandStatus: HCIEventWithCode {
        public static let code = HCIEventCode.commandStatus
        public static let name = "Command Status"

        /// Status: success means the command is pending.
        public var status: HCIStatus
        /// Num_HCI_Command_Packets: how many commands the host may send now.
        public var numHCICommandPackets: UInt8
        /// Command_Opcode (``HCIOpcode/noOperation`` for a credit alone).
        public var opcode: HCIOpcode

        /// Creates the event.
        public init(status: HCIStatus, numHCICommandPackets: UInt8, opcode: HCIOpcode) {
            self.status = status
            self.numHCICommandPackets = numHCICommandPackets
            self.opcode = opcode
        }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            status = HCIStatus(rawValue: try reader.readUInt8("Status"))
            numHCICommandPackets = try reader.readUInt8("Num_HCI_Command_Packets")
            opcode = HCIOpcode(rawValue: try reader.readUInt16("Command_Opcode"))
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(status.rawValue)
            writer.writeByte(numHCICommandPackets)
            writer.writeInteger(opcode.rawValue, endianness: .little)
        }
    }

    /// Disconnection Complete (7.7.5): a connection ended, and why.
    public struct DisconnectionComplete: HCIEventWithCode {
        public static let code = HCIEventCode.disconnectionComplete
        public static let name = "Disconnection Complete"

        /// Status: whether the disconnection happened (not why).
        public var status: HCIStatus
        /// Connection_Handle.
        public var connectionHandle: UInt16
        /// Reason: why the link ended (0x08 the peer went away, 0x13 it disconnected, 0x16 this
        /// host disconnected, 0x3E the connection never became established).
        public var reason: HCIStatus

        /// Creates the event.
        public init(status: HCIStatus = .success, connectionHandle: UInt16, reason: HCIStatus) {
            self.status = status
            self.connectionHandle = connectionHandle
            self.reason = reason
        }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            status = HCIStatus(rawValue: try reader.readUInt8("Status"))
            connectionHandle = try reader.readUInt16("Connection_Handle")
            reason = HCIStatus(rawValue: try reader.readUInt8("Reason"))
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(status.rawValue)
            writer.writeInteger(connectionHandle, endianness: .little)
            writer.writeByte(reason.rawValue)
        }
    }

    /// Number Of Completed Packets (7.7.19): the controller's buffers freed, per connection:
    /// the host may send that many more ACL packets.
    public struct NumberOfCompletedPackets: HCIEventWithCode {
        public static let code = HCIEventCode.numberOfCompletedPackets
        public static let name = "Number Of Completed Packets"

        /// Packets completed on one connection.
        public struct Completed: Sendable, Hashable {
            /// Connection_Handle.
            public var connectionHandle: UInt16
            /// Num_Completed_Packets.
            public var count: UInt16

            /// Creates an entry.
            public init(connectionHandle: UInt16, count: UInt16) {
                self.connectionHandle = connectionHandle
                self.count = count
            }
        }

        /// One entry per connection, in the order sent.
        public var completed: [Completed]

        /// Creates the event.
        /// - Parameter completed: at most 63 entries (what 255 parameter bytes hold).
        public init(completed: [Completed]) { self.completed = completed }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            let count = Int(try reader.readUInt8("Num_Handles"))
            // Handle and count alternate, as Bumble and BlueZ read them.
            var completed: [Completed] = []
            for index in 0..<count {
                completed.append(
                    Completed(
                        connectionHandle: try reader.readUInt16("Connection_Handle[\(index)]"),
                        count: try reader.readUInt16("Num_Completed_Packets[\(index)]")
                    )
                )
            }
            self.completed = completed
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(UInt8(truncatingIfNeeded: completed.count))
            for entry in completed {
                writer.writeInteger(entry.connectionHandle, endianness: .little)
                writer.writeInteger(entry.count, endianness: .little)
            }
        }
    }
}
