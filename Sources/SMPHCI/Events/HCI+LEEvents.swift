import SMPBytes

// LE Meta subevents about connections (Core Vol 4 Part E 7.7.65).

/// The local device's role in a connection. An open set.
public struct HCIRole: RawRepresentable, Sendable, Hashable {
    public let rawValue: UInt8
    /// Creates a role from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x00: this device initiated the connection.
    public static let central = HCIRole(rawValue: 0x00)
    /// 0x01: this device advertised and was connected to.
    public static let peripheral = HCIRole(rawValue: 0x01)
}

extension HCI {
    /// LE Connection Complete (7.7.65.1): a connection was made, or LE Create Connection failed
    /// (status 0x02 after a cancel, 0x3E when it could not be established).
    public struct LEConnectionComplete: HCILESubevent {
        public static let subeventCode: UInt8 = 0x01
        public static let name = "LE Connection Complete"

        /// Status.
        public var status: HCIStatus
        /// Connection_Handle.
        public var connectionHandle: UInt16
        /// Role.
        public var role: HCIRole
        /// Peer_Address_Type.
        public var peerAddressType: LEAddressType
        /// Peer_Address.
        public var peerAddress: BluetoothAddress
        /// Connection_Interval, in units of 1.25 ms.
        public var connectionInterval: UInt16
        /// Peripheral_Latency, in connection events.
        public var peripheralLatency: UInt16
        /// Supervision_Timeout, in units of 10 ms.
        public var supervisionTimeout: UInt16
        /// Central_Clock_Accuracy.
        public var centralClockAccuracy: UInt8

        /// Creates the event.
        public init(
            status: HCIStatus,
            connectionHandle: UInt16,
            role: HCIRole,
            peerAddressType: LEAddressType,
            peerAddress: BluetoothAddress,
            connectionInterval: UInt16,
            peripheralLatency: UInt16,
            supervisionTimeout: UInt16,
            centralClockAccuracy: UInt8
        ) {
            self.status = status
            self.connectionHandle = connectionHandle
            self.role = role
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.connectionInterval = connectionInterval
            self.peripheralLatency = peripheralLatency
            self.supervisionTimeout = supervisionTimeout
            self.centralClockAccuracy = centralClockAccuracy
        }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            status = HCIStatus(rawValue: try reader.readUInt8("Status"))
            connectionHandle = try reader.readUInt16("Connection_Handle")
            role = HCIRole(rawValue: try reader.readUInt8("Role"))
            peerAddressType = LEAddressType(rawValue: try reader.readUInt8("Peer_Address_Type"))
            peerAddress = try reader.readAddress("Peer_Address")
            connectionInterval = try reader.readUInt16("Connection_Interval")
            peripheralLatency = try reader.readUInt16("Peripheral_Latency")
            supervisionTimeout = try reader.readUInt16("Supervision_Timeout")
            centralClockAccuracy = try reader.readUInt8("Central_Clock_Accuracy")
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(status.rawValue)
            writer.writeInteger(connectionHandle, endianness: .little)
            writer.writeByte(role.rawValue)
            writer.writeByte(peerAddressType.rawValue)
            writer.writeAddress(peerAddress)
            writer.writeInteger(connectionInterval, endianness: .little)
            writer.writeInteger(peripheralLatency, endianness: .little)
            writer.writeInteger(supervisionTimeout, endianness: .little)
            writer.writeByte(centralClockAccuracy)
        }
    }

    /// LE Enhanced Connection Complete [v1] (7.7.65.10): LE Connection Complete with the
    /// resolvable private addresses in use; sent in its place when enabled in the LE event mask.
    public struct LEEnhancedConnectionComplete: HCILESubevent {
        public static let subeventCode: UInt8 = 0x0A
        public static let name = "LE Enhanced Connection Complete"

        /// Status.
        public var status: HCIStatus
        /// Connection_Handle.
        public var connectionHandle: UInt16
        /// Role.
        public var role: HCIRole
        /// Peer_Address_Type (0x02 and 0x03 when the controller resolved the peer's address).
        public var peerAddressType: LEAddressType
        /// Peer_Address.
        public var peerAddress: BluetoothAddress
        /// Local_Resolvable_Private_Address (zero if none was used).
        public var localResolvablePrivateAddress: BluetoothAddress
        /// Peer_Resolvable_Private_Address (zero if none was used).
        public var peerResolvablePrivateAddress: BluetoothAddress
        /// Connection_Interval, in units of 1.25 ms.
        public var connectionInterval: UInt16
        /// Peripheral_Latency, in connection events.
        public var peripheralLatency: UInt16
        /// Supervision_Timeout, in units of 10 ms.
        public var supervisionTimeout: UInt16
        /// Central_Clock_Accuracy.
        public var centralClockAccuracy: UInt8

        /// Creates the event.
        public init(
            status: HCIStatus,
            connectionHandle: UInt16,
            role: HCIRole,
            peerAddressType: LEAddressType,
            peerAddress: BluetoothAddress,
            localResolvablePrivateAddress: BluetoothAddress = .zero,
            peerResolvablePrivateAddress: BluetoothAddress = .zero,
            connectionInterval: UInt16,
            peripheralLatency: UInt16,
            supervisionTimeout: UInt16,
            centralClockAccuracy: UInt8
        ) {
            self.status = status
            self.connectionHandle = connectionHandle
            self.role = role
            self.peerAddressType = peerAddressType
            self.peerAddress = peerAddress
            self.localResolvablePrivateAddress = localResolvablePrivateAddress
            self.peerResolvablePrivateAddress = peerResolvablePrivateAddress
            self.connectionInterval = connectionInterval
            self.peripheralLatency = peripheralLatency
            self.supervisionTimeout = supervisionTimeout
            self.centralClockAccuracy = centralClockAccuracy
        }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            status = HCIStatus(rawValue: try reader.readUInt8("Status"))
            connectionHandle = try reader.readUInt16("Connection_Handle")
            role = HCIRole(rawValue: try reader.readUInt8("Role"))
            peerAddressType = LEAddressType(rawValue: try reader.readUInt8("Peer_Address_Type"))
            peerAddress = try reader.readAddress("Peer_Address")
            localResolvablePrivateAddress = try reader.readAddress("Local_Resolvable_Private_Address")
            peerResolvablePrivateAddress = try reader.readAddress("Peer_Resolvable_Private_Address")
            connectionInterval = try reader.readUInt16("Connection_Interval")
            peripheralLatency = try reader.readUInt16("Peripheral_Latency")
            supervisionTimeout = try reader.readUInt16("Supervision_Timeout")
            centralClockAccuracy = try reader.readUInt8("Central_Clock_Accuracy")
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(status.rawValue)
            writer.writeInteger(connectionHandle, endianness: .little)
            writer.writeByte(role.rawValue)
            writer.writeByte(peerAddressType.rawValue)
            writer.writeAddress(peerAddress)
            writer.writeAddress(localResolvablePrivateAddress)
            writer.writeAddress(peerResolvablePrivateAddress)
            writer.writeInteger(connectionInterval, endianness: .little)
            writer.writeInteger(peripheralLatency, endianness: .little)
            writer.writeInteger(supervisionTimeout, endianness: .little)
            writer.writeByte(centralClockAccuracy)
        }
    }

    /// LE Connection Update Complete (7.7.65.3): the connection's parameters changed (or the
    /// change failed).
    public struct LEConnectionUpdateComplete: HCILESubevent {
        public static let subeventCode: UInt8 = 0x03
        public static let name = "LE Connection Update Complete"

        /// Status.
        public var status: HCIStatus
        /// Connection_Handle.
        public var connectionHandle: UInt16
        /// Connection_Interval, in units of 1.25 ms.
        public var connectionInterval: UInt16
        /// Peripheral_Latency, in connection events.
        public var peripheralLatency: UInt16
        /// Supervision_Timeout, in units of 10 ms.
        public var supervisionTimeout: UInt16

        /// Creates the event.
        public init(
            status: HCIStatus,
            connectionHandle: UInt16,
            connectionInterval: UInt16,
            peripheralLatency: UInt16,
            supervisionTimeout: UInt16
        ) {
            self.status = status
            self.connectionHandle = connectionHandle
            self.connectionInterval = connectionInterval
            self.peripheralLatency = peripheralLatency
            self.supervisionTimeout = supervisionTimeout
        }

        public init(parameters: ArraySlice<UInt8>) throws(HCIError) {
            var reader = HCIParameterReader(parameters, packet: Self.name)
            status = HCIStatus(rawValue: try reader.readUInt8("Status"))
            connectionHandle = try reader.readUInt16("Connection_Handle")
            connectionInterval = try reader.readUInt16("Connection_Interval")
            peripheralLatency = try reader.readUInt16("Peripheral_Latency")
            supervisionTimeout = try reader.readUInt16("Supervision_Timeout")
        }

        public func writeParameters(to writer: inout ByteWriter) {
            writer.writeByte(status.rawValue)
            writer.writeInteger(connectionHandle, endianness: .little)
            writer.writeInteger(connectionInterval, endianness: .little)
            writer.writeInteger(peripheralLatency, endianness: .little)
            writer.writeInteger(supervisionTimeout, endianness: .little)
        }
    }
}
