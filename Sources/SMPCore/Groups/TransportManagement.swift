import Foundation

/// Transport management, group 11: bridging one SMP transport to another (experimental in
/// Zephyr ≥ 4.5, "subject to change"; the group id can be remapped by Kconfig).
///
/// Spec: `smp-protocol.md` §10 (commands) and §3.4 (errors); key names and types follow the
/// `smp` 4.2.0 package, the only peer that implements the group.
public enum TransportManagement: SMPManagementGroup {
    /// Group 11.
    public static let group = SMPGroup.transport

    /// Transport group error names without the `TRANSPORT_MGMT_ERR_` prefix, by value.
    public static let returnCodeNames = [
        "OK", "UNKNOWN", "TRANSPORT_MISSING_REQUIRED_FUNCTIONS", "TRANSPORT_MISSING_INFO_FUNCTIONS",
        "INVALID_TRANSPORT", "INVALID_MODE", "ALL_CONTEXTS_USED", "BOTH_TRANSPORT_AND_ALL_PARAMETERS", "NOT_BRIDGED",
        "SAME_BRIDGE_DEVICE_DISALLOWED", "TRANSPORT_INGOING_NOT_SUPPORTED", "TRANSPORT_OUTGOING_NOT_SUPPORTED",
        "INCOMING_TRANSPORT_ALREADY_BRIDGED", "OUTGOING_TRANSPORT_ALREADY_BRIDGED", "CONNECT_MISSING_PARAMETER",
        "CONNECT_INVALID_PARAMETER", "CONNECT_UNSUPPORTED_PARAMETER", "CONNECT_FAILED",
    ]

    /// This group's SMP v2 return code (`err.rc` when `err.group` is 11).
    public typealias ReturnCode = SMPGroupReturnCode<TransportManagement>

    /// A transport id. An open set: user transports start at 64.
    public struct TransportID: RawRepresentable, Codable, Sendable, Hashable {
        public let rawValue: UInt32
        /// Creates an id from its value.
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// 0: serial (console framing).
        public static let serial = TransportID(rawValue: 0)
        /// 1: raw serial.
        public static let rawSerial = TransportID(rawValue: 1)
        /// 2: Bluetooth LE; connecting takes an `address`.
        public static let bluetooth = TransportID(rawValue: 2)
        /// 3: shell.
        public static let shell = TransportID(rawValue: 3)
        /// 4: UDP over IPv4.
        public static let udpIPv4 = TransportID(rawValue: 4)
        /// 5: UDP over IPv6.
        public static let udpIPv6 = TransportID(rawValue: 5)
        /// 6: LoRaWAN.
        public static let loRaWAN = TransportID(rawValue: 6)
        /// 7: SPI.
        public static let spi = TransportID(rawValue: 7)
        /// 64: first user-defined transport.
        public static let userDefined = TransportID(rawValue: 64)
    }

    /// Command 0, connect: bridge the transport that receives the request to another one.
    public struct Connect: SMPWriteRequest, Hashable {
        /// Never sent again automatically: a bridge is opened again.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .transport }
        public static var command: UInt8 { 0 }

        /// Transport to bridge to (wire key `transport`, required).
        public var transport: TransportID
        /// Configuration mode of that transport (wire key `mode`, optional, default 0).
        public var mode: UInt32?
        /// Bluetooth only: peripheral address `AA:BB:CC:DD:EE:FF` (wire key `address`, required
        /// for Bluetooth).
        public var address: String?
        /// Bluetooth only: 0 public, 1 random (wire key `address_type`, optional).
        public var addressType: UInt8?
        /// Bluetooth only: use the LE Coded PHY instead of 1M (wire key `le_coded`, optional).
        public var leCoded: Bool?

        /// Creates the request.
        public init(
            transport: TransportID,
            mode: UInt32? = nil,
            address: String? = nil,
            addressType: UInt8? = nil,
            leCoded: Bool? = nil
        ) {
            self.transport = transport
            self.mode = mode
            self.address = address
            self.addressType = addressType
            self.leCoded = leCoded
        }

        enum CodingKeys: String, CodingKey {
            case transport, mode, address
            case addressType = "address_type"
            case leCoded = "le_coded"
        }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    /// Command 1, disconnect: end the bridge of the receiving transport (no field), of a given
    /// transport, or every bridge (`all`). Sending both `transport` and `all` is refused with
    /// `BOTH_TRANSPORT_AND_ALL_PARAMETERS`.
    public struct Disconnect: SMPWriteRequest, Hashable {
        /// Never sent again automatically: a bridge opened since is closed.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .transport }
        public static var command: UInt8 { 1 }

        /// Transport whose bridge to end (wire key `transport`, optional).
        public var transport: TransportID?
        /// `true` to end every bridge (wire key `all`, optional).
        public var all: Bool?

        /// Creates the request.
        /// - Parameters:
        ///   - transport: the transport, or `nil`.
        ///   - all: `true` for every bridge.
        public init(transport: TransportID? = nil, all: Bool? = nil) {
            self.transport = transport
            self.all = all
        }

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }

    /// Command 2, status: bridge counts and the receiving transport's bridge.
    public struct Status: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .transport }
        public static var command: UInt8 { 2 }

        /// Creates the request (an empty map).
        public init() {}

        /// The bridge status.
        public struct Response: Codable, Sendable, Hashable {
            /// How many bridges can be active at once (wire key `supported`, always present).
            public var supported: UInt32
            /// How many are active (wire key `active`, always present).
            public var active: UInt32
            /// `true` when the receiving transport is bridged (wire key `bridged`, only then).
            public var bridged: Bool?
            /// The transport it is bridged to (wire key `transport`, when known).
            public var transport: TransportID?

            /// Creates a response.
            public init(supported: UInt32, active: UInt32, bridged: Bool? = nil, transport: TransportID? = nil) {
                self.supported = supported
                self.active = active
                self.bridged = bridged
                self.transport = transport
            }
        }
    }

    /// Command 6, list: the transports that support bridging.
    public struct ListTransports: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .transport }
        public static var command: UInt8 { 6 }

        /// Creates the request (an empty map).
        public init() {}

        /// One transport.
        public struct Transport: Codable, Sendable, Hashable {
            /// Its id (wire key `id`, always present).
            public var id: TransportID
            /// Its name (wire key `name`, optional).
            public var name: String?

            /// Creates a transport description.
            public init(id: TransportID, name: String? = nil) {
                self.id = id
                self.name = name
            }
        }

        /// The transports.
        public struct Response: Codable, Sendable, Hashable {
            /// Transports that support bridging (wire key `transports`, always present).
            public var transports: [Transport]

            /// Creates a response.
            public init(transports: [Transport]) { self.transports = transports }
        }
    }

    /// Command 7, modes: the configuration modes of a transport.
    public struct Modes: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .transport }
        public static var command: UInt8 { 7 }

        /// The transport (wire key `transport`, required).
        public var transport: TransportID

        /// Creates the request.
        /// - Parameter transport: the transport.
        public init(transport: TransportID) { self.transport = transport }

        /// One mode.
        public struct Mode: Codable, Sendable, Hashable {
            /// Its id, the `mode` of ``Connect`` (wire key `id`, always present).
            public var id: UInt32
            /// What it does (wire key `description`, always present).
            public var description: String
            /// `true` if it accepts incoming bridges (wire key `incoming`, only then).
            public var incoming: Bool?
            /// `true` if it makes outgoing bridges (wire key `outgoing`, only then).
            public var outgoing: Bool?

            /// Creates a mode description.
            public init(id: UInt32, description: String, incoming: Bool? = nil, outgoing: Bool? = nil) {
                self.id = id
                self.description = description
                self.incoming = incoming
                self.outgoing = outgoing
            }
        }

        /// The modes.
        public struct Response: Codable, Sendable, Hashable {
            /// The transport's modes (wire key `modes`, always present).
            public var modes: [Mode]

            /// Creates a response.
            public init(modes: [Mode]) { self.modes = modes }
        }
    }

    /// Command 8, configuration details: the settings a transport's mode accepts in ``Connect``.
    public struct ConfigDetails: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .transport }
        public static var command: UInt8 { 8 }

        /// The transport (wire key `transport`, required).
        public var transport: TransportID
        /// Its mode (wire key `mode`, required).
        public var mode: UInt32

        /// Creates the request.
        public init(transport: TransportID, mode: UInt32) {
            self.transport = transport
            self.mode = mode
        }

        /// One configuration item.
        public struct Item: Codable, Sendable, Hashable {
            /// Key to use in ``Connect`` (wire key `name`, always present).
            public var name: String
            /// Value type: 0 uint, 1 int, 2 bool, 3 text, 4 bytes (wire key `type`, always present).
            public var type: UInt8
            /// `true` if the item is required (wire key `required`, only then).
            public var required: Bool?

            /// Creates an item.
            public init(name: String, type: UInt8, required: Bool? = nil) {
                self.name = name
                self.type = type
                self.required = required
            }
        }

        /// The items.
        public struct Response: Codable, Sendable, Hashable {
            /// The mode's configuration items, empty if none (wire key `configs`, always present).
            public var configs: [Item]

            /// Creates a response.
            public init(configs: [Item]) { self.configs = configs }
        }
    }
}

extension SMPGroupReturnCode where Group == TransportManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
    /// 2 TRANSPORT_MISSING_REQUIRED_FUNCTIONS: the transport lacks the mandatory bridging functions.
    public static var transportMissingRequiredFunctions: Self { Self(rawValue: 2) }
    /// 3 TRANSPORT_MISSING_INFO_FUNCTIONS: the transport lacks the information functions.
    public static var transportMissingInfoFunctions: Self { Self(rawValue: 3) }
    /// 4 INVALID_TRANSPORT: invalid, unsupported or missing transport id.
    public static var invalidTransport: Self { Self(rawValue: 4) }
    /// 5 INVALID_MODE: invalid, unsupported or missing mode.
    public static var invalidMode: Self { Self(rawValue: 5) }
    /// 6 ALL_CONTEXTS_USED: every bridging context is in use.
    public static var allContextsUsed: Self { Self(rawValue: 6) }
    /// 7 BOTH_TRANSPORT_AND_ALL_PARAMETERS: `transport` and `all` were both given.
    public static var bothTransportAndAllParameters: Self { Self(rawValue: 7) }
    /// 8 NOT_BRIDGED: the transport is not bridged.
    public static var notBridged: Self { Self(rawValue: 8) }
    /// 9 SAME_BRIDGE_DEVICE_DISALLOWED: a transport cannot be bridged to itself.
    public static var sameBridgeDeviceDisallowed: Self { Self(rawValue: 9) }
    /// 10 TRANSPORT_INGOING_NOT_SUPPORTED: the transport cannot be the incoming side.
    public static var transportIngoingNotSupported: Self { Self(rawValue: 10) }
    /// 11 TRANSPORT_OUTGOING_NOT_SUPPORTED: the transport cannot be the outgoing side.
    public static var transportOutgoingNotSupported: Self { Self(rawValue: 11) }
    /// 12 INCOMING_TRANSPORT_ALREADY_BRIDGED: the incoming transport is already bridged.
    public static var incomingTransportAlreadyBridged: Self { Self(rawValue: 12) }
    /// 13 OUTGOING_TRANSPORT_ALREADY_BRIDGED: the outgoing transport is already bridged.
    public static var outgoingTransportAlreadyBridged: Self { Self(rawValue: 13) }
    /// 14 CONNECT_MISSING_PARAMETER: the connection data lacks a parameter.
    public static var connectMissingParameter: Self { Self(rawValue: 14) }
    /// 15 CONNECT_INVALID_PARAMETER: a connection parameter is invalid.
    public static var connectInvalidParameter: Self { Self(rawValue: 15) }
    /// 16 CONNECT_UNSUPPORTED_PARAMETER: a connection parameter is valid but unsupported here.
    public static var connectUnsupportedParameter: Self { Self(rawValue: 16) }
    /// 17 CONNECT_FAILED: the bridge connection attempt failed.
    public static var connectFailed: Self { Self(rawValue: 17) }
}
