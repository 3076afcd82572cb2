/// One connected GATT link to a device's SMP characteristic: the few operations SMP over
/// Bluetooth LE needs, so the transport core (`GATTTransport` (SMPBLETransport)) runs over CoreBluetooth, a
/// simulated radio, or anything else that can write without response and receive notifications.
///
/// The shape follows CoreBluetooth: a write is queued only while the controller has room
/// (`canSendWriteWithoutResponse`), and the link says when it has room again
/// (`peripheralIsReady(toSendWriteWithoutResponse:)`).
///
/// ## Implementing
/// - A link is created already connected, discovered and subscribed; ``maximumWriteLength`` is
///   then the real value (never a pre-connection guess).
/// - ``events`` yields every notification of the SMP characteristic in arrival order, and one
///   ``GATTLinkEvent/disconnected(_:)`` when the link goes away, then finishes.
/// - ``writeWithoutResponse(_:)`` never blocks: it queues the value and returns `true`, or returns
///   `false` and queues nothing when the controller's buffer is full.
/// - ``waitUntilReadyForWrite()`` suspends until a write may succeed again; it throws
///   `SMPTransportError` `.disconnected` when the link drops meanwhile.
public protocol GATTLink: Sendable {
    /// The largest value of one write without response (ATT MTU − 3), read after connecting.
    /// It may change during the connection (an MTU exchange); the core reads it before each frame.
    var maximumWriteLength: Int { get }

    /// Notifications and the disconnection, in order. One consumer: the transport core.
    var events: AsyncStream<GATTLinkEvent> { get }

    /// Queues one write without response.
    /// - Parameter value: at most ``maximumWriteLength`` bytes.
    /// - Returns: `false` when the controller's write buffer is full and nothing was queued.
    /// - Throws: `SMPTransportError` `.disconnected` when the link is gone.
    func writeWithoutResponse(_ value: [UInt8]) async throws -> Bool

    /// Suspends until the controller can take another write (back-pressure, never a failure).
    /// - Throws: `SMPTransportError` `.disconnected` when the link drops while waiting.
    func waitUntilReadyForWrite() async throws

    /// Disconnects; ``events`` yields ``GATTLinkEvent/disconnected(_:)`` and finishes. Safe to
    /// call more than once.
    func disconnect() async
}

/// What a ``GATTLink`` reports.
public enum GATTLinkEvent: Sendable {
    /// One notification of the SMP characteristic (a fragment of a response, or a whole one).
    case notification([UInt8])
    /// The link went away; the error says why (`nil` after ``GATTLink/disconnect()``).
    case disconnected((any Error & Sendable)?)
}

/// The UUIDs of SMP over GATT and of the standard services a development kit shows.
public enum SMPGATT {
    /// The SMP service, `8D53DC1D-1DB7-4CD3-868B-8A527460AA84`.
    public static let serviceUUID = "8D53DC1D-1DB7-4CD3-868B-8A527460AA84"
    /// The SMP characteristic (write without response, notify),
    /// `DA2E7828-FBCE-4E01-AE9E-261174997C48`.
    public static let characteristicUUID = "DA2E7828-FBCE-4E01-AE9E-261174997C48"
    /// Device Information service (0x180A).
    public static let deviceInformationServiceUUID = "180A"
    /// Battery service (0x180F).
    public static let batteryServiceUUID = "180F"
    /// Bytes an ATT write or notification adds in front of its value inside the L2CAP PDU:
    /// opcode (1) and attribute handle (2).
    public static let attHeaderSize = 3
    /// The L2CAP basic header: length (2) and channel id (2).
    public static let l2capHeaderSize = 4
}
