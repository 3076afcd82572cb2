import Foundation
import Logging
import SMPBytes
import SMPCore
import SMPLink

/// SMP over Bluetooth LE GATT, over any `GATTLink`: CoreBluetooth on Apple platforms, the
/// simulated radio (`SimulatedBLEPeripheral` in SMPSimulator) everywhere.
///
/// - Each frame is cut into writes of the link's `GATTLink.maximumWriteLength`, read after
///   connecting and again before every frame (never a pre-connection guess).
/// - Without device-side reassembly a frame must fit in one write, so `SMPConnection.maximumFrameSize`
///   is the write length. With it (`MCUMGR_TRANSPORT_BT_REASSEMBLY`, the default) frames follow
///   the device's `buf_size`, and the writes of one frame are never interleaved with another's.
/// - A full controller buffer is back-pressure: the frame waits for the link to be ready again,
///   however long that takes; only the client's request timeout bounds it.
/// - Notifications are reassembled by the SMP header's length (`SMPStreamDecoder`), so a
///   response may arrive in any number of notifications, several responses may share one, and
///   duplicate or reordered responses reach the client, which matches them by sequence number.
/// - Every ``connect()`` asks the factory for a new link, so a client (or `FirmwareUpgrade`)
///   reconnects after a reset by connecting again.
public struct GATTTransport: SMPTransport {
    /// How the device handles messages larger than one write.
    public struct Configuration: Sendable {
        /// The device reassembles a message from several writes (Zephyr
        /// `MCUMGR_TRANSPORT_BT_REASSEMBLY`); frames then follow its `buf_size`. When `false`,
        /// each frame must fit in one write.
        public var deviceReassembles: Bool
        /// The frame size assumed, with reassembly, until the device reports `buf_size`: Zephyr's
        /// default `CONFIG_MCUMGR_TRANSPORT_NETBUF_SIZE` (384), or the write length if larger.
        public var assumedDeviceBufferSize: Int
        /// How long a half-received response may wait for its next notification before it is
        /// dropped. Zephyr gives up on the rest of a response when a notification cannot be
        /// queued, so without this limit the stale head would swallow the next response (the
        /// retry's answer) and the stream would stay out of step. Keep it shorter than the
        /// client's request timeout, so a retry's answer always finds an empty buffer.
        public var reassemblyIdleTimeout: Duration
        /// The clock the idle timeout is measured on (a test clock in tests).
        public var clock: SMPClock

        /// Creates a configuration.
        /// - Parameters:
        ///   - deviceReassembles: the device reassembles messages larger than one write.
        ///   - assumedDeviceBufferSize: the frame size until the device reports its buffer.
        ///   - reassemblyIdleTimeout: how long a partial response waits for its next fragment.
        ///   - clock: the clock the idle timeout is measured on.
        public init(
            deviceReassembles: Bool = true,
            assumedDeviceBufferSize: Int = 384,
            reassemblyIdleTimeout: Duration = .seconds(1),
            clock: SMPClock = .continuous
        ) {
            self.deviceReassembles = deviceReassembles
            self.assumedDeviceBufferSize = assumedDeviceBufferSize
            self.reassemblyIdleTimeout = reassemblyIdleTimeout
            self.clock = clock
        }
    }

    public let endpointDescription: String
    /// The configuration.
    public let configuration: Configuration
    private let makeLink: @Sendable () async throws -> any GATTLink
    private let logger: Logger

    /// Creates a transport.
    /// - Parameters:
    ///   - endpointDescription: for logs and errors, e.g. `ble://Zephyr`.
    ///   - configuration: reassembly.
    ///   - logger: logger for the transport (label `mcumgr.transport.ble` by default).
    ///   - connect: opens a new link (connect, discover, subscribe); called by every ``connect()``.
    public init(
        endpointDescription: String,
        configuration: Configuration = .init(),
        logger: Logger? = nil,
        connect: @escaping @Sendable () async throws -> any GATTLink
    ) {
        self.endpointDescription = endpointDescription
        self.configuration = configuration
        self.logger = logger ?? Logger(label: "mcumgr.transport.ble")
        self.makeLink = connect
    }

    /// Opens a link and returns a connection over it.
    /// - Throws: `SMPTransportError` from the factory, or `.connectionFailed` wrapping its error.
    public func connect() async throws -> any SMPConnection {
        let link: any GATTLink
        do {
            link = try await makeLink()
        } catch let error as SMPTransportError {
            throw error
        } catch {
            throw SMPTransportError(
                .connectionFailed,
                "cannot connect to \(endpointDescription)",
                cause: error
            )
        }
        return GATTConnection(link: link, configuration: configuration, logger: logger)
    }
}

/// One connection of a ``GATTTransport``: frames out as writes, notifications in as frames.
public final class GATTConnection: SMPConnection, Sendable {
    public let frames: AsyncThrowingStream<[UInt8], any Error>
    /// The link underneath.
    public let link: any GATTLink
    private let configuration: GATTTransport.Configuration
    private let writer: FrameWriter
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    private let closed = Locked(false)
    /// Turns the link's notifications into frames until the link ends; cancelled by `close()`
    /// and when the connection is dropped, so that no task outlives it.
    private let receiver: Task<Void, Never>

    init(link: any GATTLink, configuration: GATTTransport.Configuration, logger: Logger) {
        self.link = link
        self.configuration = configuration
        writer = FrameWriter(link: link)
        let (frames, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        self.frames = frames
        self.continuation = continuation
        let events = link.events
        let idleLimit = configuration.reassemblyIdleTimeout
        let clock = configuration.clock
        receiver = Task {
            var decoder = SMPStreamDecoder()
            var lastNotification = clock.elapsed()
            for await event in events {
                switch event {
                case .notification(let bytes):
                    // Checked on arrival, not by a timer: a stale head only matters once the
                    // next notification would be appended to it.
                    let now = clock.elapsed()
                    if decoder.bufferedByteCount > 0, now - lastNotification > idleLimit {
                        logger.debug(
                            "dropped a partial response after a silence",
                            metadata: ["bytes": "\(decoder.bufferedByteCount)", "idle": "\(now - lastNotification)"]
                        )
                        decoder.reset()
                    }
                    lastNotification = now
                    for case .frame(let frame) in decoder.feed(bytes) { continuation.yield(frame) }
                case .disconnected(let cause):
                    continuation.finish(
                        throwing: SMPTransportError(.disconnected, "the peripheral disconnected", cause: cause)
                    )
                    return
                }
            }
            continuation.finish(throwing: SMPTransportError(.disconnected, "the link ended"))
        }
    }

    /// The write length, or with device reassembly the device's buffer (until it reports one,
    /// ``GATTTransport/Configuration/assumedDeviceBufferSize``).
    public var maximumFrameSize: Int {
        let write = link.maximumWriteLength
        return configuration.deviceReassembles ? max(write, configuration.assumedDeviceBufferSize) : write
    }

    /// With reassembly the device's `buf_size` bounds frames, not the write length.
    public var frameSizeFollowsDevice: Bool { configuration.deviceReassembles }

    /// Writes one frame as consecutive writes without response, waiting out a full buffer.
    /// - Throws: `SMPTransportError` `.frameTooLarge` or `.disconnected`.
    public func send(_ frame: [UInt8]) async throws {
        guard !closed.withLock({ $0 }) else { throw SMPTransportError.closed("the connection is closed") }
        let limit = configuration.deviceReassembles ? SMPHeader.size + SMPFrame.maximumPayloadSize : maximumFrameSize
        guard frame.count <= limit else {
            throw SMPTransportError.frameTooLarge(
                size: frame.count,
                limit: limit,
                "\(frame.count)-byte frame exceeds the \(limit)-byte write and the device does not reassemble"
            )
        }
        try await writer.write(frame)
    }

    public func close() async {
        let first = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        guard first else { return }
        // Finished first, so that readers see the close, not the receiver's "link ended".
        continuation.finish()
        receiver.cancel()
        await link.disconnect()
    }

    deinit { receiver.cancel() }
}

/// Keeps the writes of one frame together: frames are written one at a time, in call order.
actor FrameWriter {
    private let link: any GATTLink
    private var busy = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    init(link: any GATTLink) {
        self.link = link
    }

    func write(_ frame: [UInt8]) async throws {
        if busy {
            await withCheckedContinuation { waiters.append($0) }
        } else {
            busy = true
        }
        defer {
            if waiters.isEmpty { busy = false } else { waiters.removeFirst().resume() }
        }
        // Read the write length now: it is only known after connecting and may grow.
        let length = link.maximumWriteLength
        for fragment in BLEFragmentation.fragments(of: frame, maximumWriteLength: length) {
            let value = Array(fragment)
            while try await !link.writeWithoutResponse(value) {
                try await link.waitUntilReadyForWrite()
            }
        }
    }
}
