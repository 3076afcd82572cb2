import SMPBytes

// Data length extension (Core Vol 4 Part E 7.8.33 and 7.7.65.7).

extension HCI {
    /// LE Set Data Length (7.8.33): ask the controller to send link-layer packets of up to this
    /// many payload octets on a connection. A suggestion: the link layer negotiates, and reports
    /// the outcome with LE Data Length Change, if anything changed.
    public struct LESetDataLength: HCICommand {
        public static let opcode = HCIOpcode.leSetDataLength
        public static let name = "LE Set Data Length"

        /// The return parameters: the connection handle echoed.
        public struct ReturnParameters: HCIReturnParameters {
            /// Connection_Handle.
            public var connectionHandle: UInt16

            /// Creates the return parameters.
            public init(connectionHandle: UInt16) { self.connectionHandle = connectionHandle }

            public init(fields bytes: ArraySlice<UInt8>) throws(HCIError) {
                var reader = HCIParameterReader(bytes, packet: "LE Set Data Length return parameters")
                connectionHandle = try reader.readUInt16("Connection_Handle")
            }

            public func writeFields(to writer: inout ByteWriter) {
                writer.writeInteger(connectionHandle, endianness: .little)
            }
        }

        /// The largest TX_Octets (a link-layer payload of 251 bytes).
        public static let maximumTxOctets: UInt16 = 251
        /// The TX_Time of 251 octets on LE 1M: (251 + 14) × 8 µs.
        public static let maximumTxTime1M: UInt16 = 2120

        /// Connection_Handle.
        public var connectionHandle: UInt16
        /// TX_Octets: 27 to 251.
        public var txOctets: UInt16
        /// TX_Time, in µs: 328 to 17040.
        public var txTime: UInt16

        /// Creates the command.
        /// - Parameters:
        ///   - connectionHandle: the connection.
        ///   - txOctets: the payload octets asked for (251 by default, the most).
        ///   - txTime: the time asked for (2120 µs by default: 251 octets on LE 1M).
        public init(connectionHandle: UInt16, txOctets: UInt16 = maximumTxOctets, txTime: UInt16 = maximumTxTime1M) {
            self.connectionHandle = connectionHandle
            self.txOctets = txOctets
            self.txTime = txTime
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            connectionHandle = try reader.readUInt16("Connection_Handle")
            txOctets = try reader.readUInt16("TX_Octets")
            txTime = try reader.readUInt16("TX_Time")
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeInteger(connectionHandle, endianness: .little)
            writer.writeInteger(txOctets, endianness: .little)
            writer.writeInteger(txTime, endianness: .little)
        }
    }

    /// LE Data Length Change (7.7.65.7): the link layer's packet sizes on a connection changed.
    public struct LEDataLengthChange: HCILESubevent {
        public static let subeventCode: UInt8 = 0x07
        public static let name = "LE Data Length Change"

        /// Connection_Handle.
        public var connectionHandle: UInt16
        /// Max_TX_Octets: the most payload octets this side now sends in one link-layer packet.
        public var maxTxOctets: UInt16
        /// Max_TX_Time, in µs.
        public var maxTxTime: UInt16
        /// Max_RX_Octets: the most payload octets this side now receives in one packet.
        public var maxRxOctets: UInt16
        /// Max_RX_Time, in µs.
        public var maxRxTime: UInt16

        /// Creates the event.
        public init(
            connectionHandle: UInt16,
            maxTxOctets: UInt16,
            maxTxTime: UInt16,
            maxRxOctets: UInt16,
            maxRxTime: UInt16
        ) {
            self.connectionHandle = connectionHandle
            self.maxTxOctets = maxTxOctets
            self.maxTxTime = maxTxTime
            self.maxRxOctets = maxRxOctets
            self.maxRxTime = maxRxTime
        }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            connectionHandle = try reader.readUInt16("Connection_Handle")
            maxTxOctets = try reader.readUInt16("Max_TX_Octets")
            maxTxTime = try reader.readUInt16("Max_TX_Time")
            maxRxOctets = try reader.readUInt16("Max_RX_Octets")
            maxRxTime = try reader.readUInt16("Max_RX_Time")
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeInteger(connectionHandle, endianness: .little)
            writer.writeInteger(maxTxOctets, endianness: .little)
            writer.writeInteger(maxTxTime, endianness: .little)
            writer.writeInteger(maxRxOctets, endianness: .little)
            writer.writeInteger(maxRxTime, endianness: .little)
        }
    }
}
