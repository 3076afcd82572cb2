/// An LE connection as the controller reported it in LE (Enhanced) Connection Complete: what
/// the host needs to talk over it and to tell it from other connections.
public struct LEConnection: Sendable, Hashable {
    /// Connection_Handle: what ACL packets and later events name the connection by.
    public var handle: UInt16
    /// This device's role.
    public var role: HCIRole
    /// The peer's address.
    public var peerAddress: BluetoothAddress
    /// The peer's address type (0x02 or 0x03 when the controller resolved a private address).
    public var peerAddressType: LEAddressType
    /// Connection_Interval, in units of 1.25 ms.
    public var interval: UInt16
    /// Peripheral_Latency, in connection events.
    public var latency: UInt16
    /// Supervision_Timeout, in units of 10 ms.
    public var supervisionTimeout: UInt16

    /// Creates a connection.
    public init(
        handle: UInt16,
        role: HCIRole,
        peerAddress: BluetoothAddress,
        peerAddressType: LEAddressType,
        interval: UInt16,
        latency: UInt16,
        supervisionTimeout: UInt16
    ) {
        self.handle = handle
        self.role = role
        self.peerAddress = peerAddress
        self.peerAddressType = peerAddressType
        self.interval = interval
        self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
}

/// An LE Connection Complete or LE Enhanced Connection Complete, whichever the controller sent:
/// its status, and the connection it describes (meaningful on success only).
struct ConnectionCompletion: Sendable, Hashable {
    var status: HCIStatus
    var connection: LEConnection

    /// The completion an event carries, or `nil` for any other event.
    init?(_ event: HCIEvent) {
        switch event {
        case .leConnectionComplete(let complete):
            status = complete.status
            connection = LEConnection(
                handle: complete.connectionHandle,
                role: complete.role,
                peerAddress: complete.peerAddress,
                peerAddressType: complete.peerAddressType,
                interval: complete.connectionInterval,
                latency: complete.peripheralLatency,
                supervisionTimeout: complete.supervisionTimeout
            )
        case .leEnhancedConnectionComplete(let complete):
            status = complete.status
            connection = LEConnection(
                handle: complete.connectionHandle,
                role: complete.role,
                peerAddress: complete.peerAddress,
                peerAddressType: complete.peerAddressType,
                interval: complete.connectionInterval,
                latency: complete.peripheralLatency,
                supervisionTimeout: complete.supervisionTimeout
            )
        default:
            return nil
        }
    }
}
