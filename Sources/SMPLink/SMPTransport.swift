/// A way to reach a device: UDP, a serial port, Bluetooth LE, or an in-process simulator.
///
/// A transport holds the address (host and port, tty path, peripheral identifier) and opens
/// connections. It knows nothing of SMP sequence numbers or requests: link framing (serial
/// base64 lines, BLE fragments) happens inside the connection, and the client above it sees
/// only whole SMP frames.
///
/// ## Implementing
/// `connect()` returns a connection whose ``SMPConnection/frames`` yields every whole SMP frame
/// received, in order, and finishes (or throws ``SMPTransportError``) when the link goes away.
/// Conformance is checked by running the client tests against the new transport.
public protocol SMPTransport: Sendable {
    /// A short description for logs and errors, e.g. `udp://127.0.0.1:1337`.
    var endpointDescription: String { get }

    /// Opens a connection to the device.
    /// - Returns: the open connection.
    /// - Throws: ``SMPTransportError`` `.connectionFailed` (with the cause) or `.unavailable`.
    func connect() async throws -> any SMPConnection
}

/// One open conversation with a device: a pipe of whole SMP frames in both directions.
///
/// Not a lockstep send-and-receive: several requests may be in flight, and the client matches
/// responses to requests by sequence number.
public protocol SMPConnection: Sendable {
    /// The largest SMP frame (header included) this link carries in one message: the UDP
    /// payload size, the serial decoded buffer minus framing, or the BLE write length (or the
    /// device's reassembly buffer when it has one). The client clamps it further to the
    /// device's `buf_size`.
    var maximumFrameSize: Int { get }

    /// Every whole SMP frame received, in arrival order. There is one consumer: the client.
    /// Finishes when the connection is closed; throws ``SMPTransportError`` `.disconnected` when
    /// the link drops.
    var frames: AsyncThrowingStream<[UInt8], any Error> { get }

    /// Sends one whole SMP frame (header and payload), framing it as the link requires.
    /// - Parameter frame: the frame.
    /// - Throws: ``SMPTransportError`` `.frameTooLarge`, `.disconnected` or `.sendFailed`.
    func send(_ frame: [UInt8]) async throws

    /// Bytes the link adds inside the device's SMP buffer around each message: 4 for console
    /// serial (the length prefix and CRC share the buffer), 0 otherwise. The client subtracts it
    /// from the device's `buf_size`.
    var deviceBufferOverhead: Int { get }

    /// Whether ``maximumFrameSize`` is only a safe guess until the device reports its buffer
    /// size (serial links, where nothing else bounds a message); the client then uses the
    /// device's `buf_size` less ``deviceBufferOverhead`` instead.
    var frameSizeFollowsDevice: Bool { get }

    /// Whether the user set ``maximumFrameSize`` (a serial link's `mtu=`): the client then
    /// trusts it for uploads to a device that does not report its buffers, instead of keeping
    /// to the size every device takes.
    var frameSizeIsChosen: Bool { get }

    /// Closes the connection; ``frames`` finishes. Safe to call more than once.
    func close() async
}

extension SMPConnection {
    /// No overhead by default.
    public var deviceBufferOverhead: Int { 0 }

    /// By default the link's limit is firm.
    public var frameSizeFollowsDevice: Bool { false }

    /// By default the link's limit is its own, not the user's.
    public var frameSizeIsChosen: Bool { false }
}
