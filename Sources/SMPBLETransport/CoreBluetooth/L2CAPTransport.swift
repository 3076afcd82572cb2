#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth
    import Foundation
    import SMPLink

    /// SMP over a Bluetooth LE L2CAP connection-oriented channel: the peripheral is found and
    /// connected as for GATT, then a channel is opened by PSM and frames travel back to back on its
    /// byte stream, cut by header length (`L2CAPStream`).
    ///
    /// Zephyr has no upstream SMP-over-L2CAP server; this is for firmware that serves SMP on a
    /// dynamic PSM. Frames follow the device's `buf_size`.
    public struct L2CAPTransport: SMPTransport {
        /// The PSM the device listens on.
        public let psm: UInt16
        /// The frame size until the device reports `buf_size`.
        public let assumedDeviceBufferSize: Int
        private let target: String
        private let central: CoreBluetoothCentral

        /// Creates a transport.
        /// - Parameters:
        ///   - target: a peripheral name or identifier. The SMP service UUID is used only to find an
        ///     already-connected peripheral and, with an empty target, as the scan filter: a device
        ///     that serves SMP over L2CAP only (no SMP GATT service) needs a name or identifier.
        ///   - psm: the channel's PSM.
        ///   - configuration: the SMP service UUID (above), scan and step timeouts; the
        ///     characteristic UUID is not used (but, like the service UUID, must be well formed).
        ///   - assumedDeviceBufferSize: the frame size until the device reports `buf_size`.
        public init(
            _ target: String,
            psm: UInt16,
            configuration: CoreBluetoothConfiguration = .init(),
            assumedDeviceBufferSize: Int = 384
        ) {
            self.target = target
            self.psm = psm
            self.assumedDeviceBufferSize = assumedDeviceBufferSize
            central = CoreBluetoothCentral(configuration: configuration)
        }

        public var endpointDescription: String { "ble://\(target)?psm=\(psm)" }

        /// Connects and opens the channel; a connection made for a channel that then fails to open
        /// is cancelled again. Malformed UUIDs in the configuration throw `.invalidAddress`.
        public func connect() async throws -> any SMPConnection {
            try await central.openChannel(to: target, psm: psm, maximumFrameSize: assumedDeviceBufferSize)
        }
    }

    /// One open L2CAP channel carrying SMP frames.
    ///
    /// Safe because `stream`, `isOpen` and the channel's streams are used only on `queue`, which
    /// is also where the streams deliver their events; `peripheral` is only compared by identity,
    /// on the central's queue (the conformance is unchecked: queue confinement).
    final class L2CAPConnection: SMPConnection, @unchecked Sendable {
        let frames: AsyncThrowingStream<[UInt8], any Error>
        let maximumFrameSize: Int
        var frameSizeFollowsDevice: Bool { true }
        /// The peripheral under the channel.
        let peripheral: CBPeripheral
        private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
        private let streams: L2CAPChannelStreams
        private let central: CoreBluetoothCentral
        /// The central's connection number when this was opened: closing cancels the LE connection
        /// only while no later attempt has connected (and so taken the connection over).
        private let connection: Int
        private let queue = DispatchQueue(label: "mcumgr.ble.l2cap")
        private var stream = L2CAPStream()
        private var isOpen = true

        init(
            channel: CBL2CAPChannel,
            central: CoreBluetoothCentral,
            peripheral: CBPeripheral,
            connection: Int,
            maximumFrameSize: Int
        ) {
            self.central = central
            self.peripheral = peripheral
            self.connection = connection
            self.maximumFrameSize = maximumFrameSize
            streams = L2CAPChannelStreams(channel: channel)
            (frames, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
            streams.owner = self
            queue.sync { streams.open(on: queue) }
        }

        /// Released without ``close()``: tear the streams down all the same (on `queue`, capturing
        /// only the streams object, which holds the channel) and give the LE connection back.
        deinit {
            guard isOpen else { return }
            let streams = streams
            queue.async { streams.close() }
            central.releaseConnection(connection)
            continuation.finish()
        }

        /// Queues the frame; the output stream takes it as fast as the channel's credits allow.
        func send(_ frame: [UInt8]) async throws {
            try queue.sync {
                guard isOpen else { throw SMPTransportError(.disconnected, "the L2CAP channel is closed") }
                stream.enqueue(frame)
                flush()
            }
        }

        /// Closes the streams and the Bluetooth connection under them.
        func close() async {
            queue.sync { shut(nil) }
        }

        /// From the central: the LE connection under the channel is gone (a disconnection with an
        /// error, Bluetooth off), or a newer connection replaced this one. The streams may not
        /// report it themselves.
        func linkLost(_ error: SMPTransportError) {
            queue.async { self.shut(error) }
        }

        // MARK: - On `queue`

        fileprivate func handle(_ aStream: Stream, _ eventCode: Stream.Event) {
            let channel = streams.channel
            switch eventCode {
            case .hasBytesAvailable:
                guard isOpen else { return }  // an event queued before close()
                var buffer = [UInt8](repeating: 0, count: 4096)
                while channel.inputStream.hasBytesAvailable {
                    let count = channel.inputStream.read(&buffer, maxLength: buffer.count)
                    guard count > 0 else { break }
                    for frame in stream.receive(buffer[0..<count]) { continuation.yield(frame) }
                }
            case .hasSpaceAvailable:
                flush()
            case .errorOccurred, .endEncountered:
                shut(SMPTransportError(.disconnected, "the L2CAP channel closed", cause: aStream.streamError))
            default:
                break
            }
        }

        private func flush() {
            // `outputStream` is `OutputStream!`: a plain `let` would infer `OutputStream?`.
            guard let output = streams.channel.outputStream else { return }
            while isOpen && !stream.isDrained && output.hasSpaceAvailable {
                let pending = Array(stream.pendingBytes)
                let written = output.write(pending, maxLength: pending.count)
                guard written > 0 else { break }
                stream.didWrite(written)
            }
        }

        private func shut(_ error: SMPTransportError?) {
            guard isOpen else { return }
            isOpen = false
            streams.close()
            stream.reset()
            // Closing the streams closes the channel; the LE connection stays up until cancelled.
            central.releaseConnection(connection)
            if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        }
    }

    /// A channel's two streams, scheduled on a dispatch queue, and their delegate.
    ///
    /// A stream does not retain its delegate (`unowned(unsafe)` on Darwin): the connection retains
    /// this object, and it reaches the connection weakly, so an event after the connection is gone
    /// finds nobody rather than freed memory.
    ///
    /// Safe because it is used only on the connection's queue and `owner` is set once, before the
    /// streams are scheduled (the conformance is unchecked: queue confinement, and a stream
    /// delegate must be an `NSObject`).
    private final class L2CAPChannelStreams: NSObject, StreamDelegate, @unchecked Sendable {
        let channel: CBL2CAPChannel
        weak var owner: L2CAPConnection?

        init(channel: CBL2CAPChannel) {
            self.channel = channel
        }

        /// Schedules and opens the streams (on `queue`). No run loop runs on our threads: the
        /// streams deliver their events on `queue`.
        func open(on queue: DispatchQueue) {
            for stream in [channel.inputStream as Stream, channel.outputStream as Stream] {
                stream.delegate = self
            }
            CFReadStreamSetDispatchQueue(channel.inputStream as CFReadStream, queue)
            CFWriteStreamSetDispatchQueue(channel.outputStream as CFWriteStream, queue)
            channel.inputStream.open()
            channel.outputStream.open()
        }

        /// Detaches the delegate and the queue, then closes (on the queue): no event comes after.
        func close() {
            for stream in [channel.inputStream as Stream, channel.outputStream as Stream] {
                stream.delegate = nil
            }
            CFReadStreamSetDispatchQueue(channel.inputStream as CFReadStream, nil)
            CFWriteStreamSetDispatchQueue(channel.outputStream as CFWriteStream, nil)
            channel.inputStream.close()
            channel.outputStream.close()
        }

        func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
            owner?.handle(aStream, eventCode)
        }
    }
#endif
