import SMPBytes

// Legacy advertising, for the peripheral role (Core Vol 4 Part E 7.8.5 to 7.8.9).

/// The kind of legacy advertising (Advertising_Type). An open set.
public struct LEAdvertisingType: RawRepresentable, Sendable, Hashable {
    public let rawValue: UInt8
    /// Creates an advertising type from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x00 ADV_IND: connectable and scannable undirected.
    public static let connectableUndirected = LEAdvertisingType(rawValue: 0x00)
    /// 0x01 ADV_DIRECT_IND, high duty cycle.
    public static let connectableDirectedHighDuty = LEAdvertisingType(rawValue: 0x01)
    /// 0x02 ADV_SCAN_IND: scannable undirected.
    public static let scannableUndirected = LEAdvertisingType(rawValue: 0x02)
    /// 0x03 ADV_NONCONN_IND: neither connectable nor scannable.
    public static let nonConnectableUndirected = LEAdvertisingType(rawValue: 0x03)
    /// 0x04 ADV_DIRECT_IND, low duty cycle.
    public static let connectableDirectedLowDuty = LEAdvertisingType(rawValue: 0x04)
}

extension HCI {
    /// LE Set Advertising Parameters (7.8.5).
    public struct LESetAdvertisingParameters: HCICommand {
        public static let opcode = HCIOpcode.leSetAdvertisingParameters
        public static let name = "LE Set Advertising Parameters"
        /// Advertising_Interval_Min, in units of 0.625 ms (0x0020 to 0x4000).
        public var intervalMin: UInt16
        /// Advertising_Interval_Max, in units of 0.625 ms; at least the minimum.
        public var intervalMax: UInt16
        /// Advertising_Type.
        public var type: LEAdvertisingType
        /// Own_Address_Type: the address advertised.
        public var ownAddressType: LEAddressType
        /// Peer_Address_Type, for directed advertising.
        public var peerAddressType: LEAddressType
        /// Peer_Address, for directed advertising (zero otherwise).
        public var peerAddress: BluetoothAddress
        /// Advertising_Channel_Map: bit 0 channel 37, bit 1 channel 38, bit 2 channel 39.
        public var channelMap: UInt8
        /// Advertising_Filter_Policy (0x00: any scanner, any initiator).
        public var filterPolicy: UInt8

        /// Creates the command.
        public init(
            intervalMin: UInt16,
            intervalMax: UInt16,
            type: LEAdvertisingType,
            ownAddressType: LEAddressType,
            peerAddressType: LEAddressType = .publicDevice,
            peerAddress: BluetoothAddress = .zero,
            channelMap: UInt8 = 0x07,
            filterPolicy: UInt8 = 0
        ) {
            self.intervalMin = intervalMin
            self.intervalMax = intervalMax
            self.type = type
            self.ownAddressType = ownAddressType
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.channelMap = channelMap
            self.filterPolicy = filterPolicy
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            intervalMin = try reader.readUInt16("Advertising_Interval_Min")
            intervalMax = try reader.readUInt16("Advertising_Interval_Max")
            type = LEAdvertisingType(rawValue: try reader.readUInt8("Advertising_Type"))
            ownAddressType = LEAddressType(rawValue: try reader.readUInt8("Own_Address_Type"))
            peerAddressType = LEAddressType(rawValue: try reader.readUInt8("Peer_Address_Type"))
            peerAddress = try reader.readAddress("Peer_Address")
            channelMap = try reader.readUInt8("Advertising_Channel_Map")
            filterPolicy = try reader.readUInt8("Advertising_Filter_Policy")
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeInteger(intervalMin, endianness: .little)
            writer.writeInteger(intervalMax, endianness: .little)
            writer.writeByte(type.rawValue)
            writer.writeByte(ownAddressType.rawValue)
            writer.writeByte(peerAddressType.rawValue)
            writer.writeAddress(peerAddress)
            writer.writeByte(channelMap)
            writer.writeByte(filterPolicy)
        }
    }

    /// LE Set Advertising Data (7.8.7): what ADV_IND and its kin carry.
    public struct LESetAdvertisingData: HCICommand {
        public static let opcode = HCIOpcode.leSetAdvertisingData
        public static let name = "LE Set Advertising Data"
        /// Advertising_Data, at most 31 bytes (sent zero-padded to 31).
        public var data: [UInt8]

        /// Creates the command.
        /// - Parameter data: the advertising data.
        /// - Throws: ``HCIError`` `.limitExceeded` if it is longer than 31 bytes.
        public init(data: [UInt8]) throws(HCIError) {
            self.data = try LegacyAdvertisingPayload.checked(data, Self.name)
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            data = try LegacyAdvertisingPayload.read(parameters, packet: Self.name, field: "Advertising_Data")
        }

        public func writeParameters(to writer: inout ByteWriter) {
            LegacyAdvertisingPayload.write(data, to: &writer)
        }
    }

    /// LE Set Scan Response Data (7.8.8): what the SCAN_RSP to an active scanner carries.
    public struct LESetScanResponseData: HCICommand {
        public static let opcode = HCIOpcode.leSetScanResponseData
        public static let name = "LE Set Scan Response Data"
        /// Scan_Response_Data, at most 31 bytes (sent zero-padded to 31).
        public var data: [UInt8]

        /// Creates the command.
        /// - Parameter data: the scan response data.
        /// - Throws: ``HCIError`` `.limitExceeded` if it is longer than 31 bytes.
        public init(data: [UInt8]) throws(HCIError) {
            self.data = try LegacyAdvertisingPayload.checked(data, Self.name)
        }

        public init(parameters: [UInt8]) throws(HCIError) {
            data = try LegacyAdvertisingPayload.read(parameters, packet: Self.name, field: "Scan_Response_Data")
        }

        public func writeParameters(to writer: inout ByteWriter) {
            LegacyAdvertisingPayload.write(data, to: &writer)
        }
    }

    /// LE Set Advertising Enable (7.8.9). Legacy advertising also stops by itself when a
    /// connectable advertisement is connected to.
    public struct LESetAdvertisingEnable: HCICommand {
        public static let opcode = HCIOpcode.leSetAdvertisingEnable
        public static let name = "LE Set Advertising Enable"
        /// Advertising_Enable.
        public var enable: Bool

        /// Creates the command.
        public init(enable: Bool) { self.enable = enable }

        public init(parameters: [UInt8]) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            enable = try readBool(&reader, "Advertising_Enable", packet: Self.name)
            try reader.expectEnd()
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(enable ? 1 : 0)
        }
    }
}

/// The fixed 32-byte field of LE Set Advertising Data and LE Set Scan Response Data: a length
/// and 31 bytes, zero-padded after the significant part.
enum LegacyAdvertisingPayload {
    /// The most bytes legacy advertising or scan response data holds.
    static let maximumLength = 31

    static func checked(_ data: [UInt8], _ packet: String) throws(HCIError) -> [UInt8] {
        guard data.count <= maximumLength else {
            throw HCIError(.limitExceeded, "\(packet): \(data.count) bytes of data, more than \(maximumLength)")
        }
        return data
    }

    static func read(_ parameters: [UInt8], packet: String, field: String) throws(HCIError) -> [UInt8] {
        var reader = HCIParameterReader(parameters, packet: packet)
        let length = Int(try reader.readUInt8("\(field)_Length"))
        guard length <= maximumLength else {
            throw HCIError(.malformedPacket, "\(packet): \(field)_Length is \(length), more than \(maximumLength)")
        }
        // The field is always 31 bytes; what follows the significant part is padding.
        let field = try reader.readBytes(field, count: maximumLength)
        try reader.expectEnd()
        return Array(field.prefix(length))
    }

    static func write(_ data: [UInt8], to writer: inout ByteWriter) {
        let data = data.prefix(maximumLength)
        writer.writeByte(UInt8(data.count))
        writer.writeBytes(Array(data))
        writer.writeBytes([UInt8](repeating: 0, count: maximumLength - data.count))
    }
}
