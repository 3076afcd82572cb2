#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth
    import Foundation
    import MCUmgr

    /// SMP over a Bluetooth LE L2CAP connection-oriented channel: the peripheral is found and
    /// connected as for GATT, then a channel is opened by PSM and frames travel back to back on its
    /// byte stream, cut by header length (``L2CAPStream``).
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
        ///   - target: a peripheral name or identifier.
        ///   - psm: the channel's PSM.
        ///   - configuration: scan and step timeouts (the service UUIDs are not used).
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

        public func connect() async throws -> any SMPConnection {
            try await central.connectPeripheral(to: target)
            let channel = try await central.openChannel(psm: psm)
            return L2CAPConnection(channel: channel, central: central, maximumFrameSize: assumedDeviceBufferSize)
        }
    }

    /// One open L2CAP channel carrying SMP frames.
    ///
    /// `@unchecked Sendable`: `stream` and the channel's streams are used only on `queue`, which
    /// is also where the streams deliver their events.
    final class L2CAPConnection: NSObject, SMPConnection, StreamDelegate, @unchecked Sendable {
        let frames: AsyncThrowingStream<[UInt8], any Error>
        let maximumFrameSize: Int
        var frameSizeFollowsDevice: Bool { true }
        private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
        private let channel: CBL2CAPChannel
        private let central: CoreBluetoothCentral
        private let queue = DispatchQueue(label: "mcumgr.ble.l2cap")
        private var stream = L2CAPStream()
        private var isOpen = true

        init(channel: CBL2CAPChannel, central: CoreBluetoothCentral, maximumFrameSize: Int) {
            self.channel = channel
            self.central = central
            self.maximumFrameSize = maximumFrameSize
            (frames, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
            super.init()
            // No run loop runs on our threads: the streams deliver their events on `queue`.
            queue.sync {
                for stream in [channel.inputStream as Stream, channel.outputStream as Stream] {
                    stream.delegate = self
                }
                CFReadStreamSetDispatchQueue(channel.inputStream as CFReadStream, queue)
                CFWriteStreamSetDispatchQueue(channel.outputStream as CFWriteStream, queue)
                channel.inputStream.open()
                channel.outputStream.open()
            }
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

        // MARK: - On `queue`

        func stream(_ aStream: Stream, handle eventCode: Stream.Event) {
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
            guard let output = channel.outputStream else { return }
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
            // Detach before closing: a stream's delegate is not retained (assign on Darwin), and
            // no event may reach this object once it is closed.
            for stream in [channel.inputStream as Stream, channel.outputStream as Stream] {
                stream.delegate = nil
            }
            CFReadStreamSetDispatchQueue(channel.inputStream as CFReadStream, nil)
            CFWriteStreamSetDispatchQueue(channel.outputStream as CFWriteStream, nil)
            channel.inputStream.close()
            channel.outputStream.close()
            stream.reset()
            // Closing the streams closes the channel; the LE connection stays up until cancelled.
            central.cancelCurrentPeripheral()
            if let error { continuation.finish(throwing: error) } else { continuation.finish() }
        }
    }
#endif
