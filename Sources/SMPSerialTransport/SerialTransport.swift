import Foundation
import Logging
import SMPCore
import SMPLink
import SMPPOSIX

/// SMP over a serial port: console framing (base64 lines, as Zephyr's UART and shell
/// transports and MCUboot serial recovery use) or raw framing (bare SMP messages).
///
/// Console text and logs printed on the same port are tolerated: they are logged at debug
/// level and never mistaken for SMP.
public struct SerialTransport: SMPTransport {
    /// How SMP messages are put on the wire.
    public enum Framing: Sendable, Hashable {
        /// Base64 lines with `06 09`/`04 14` markers and CRC-16; lines at most this long
        /// (127 bytes including marker and newline unless the device says otherwise).
        case console(maximumLineLength: Int = SerialFraming.defaultMaximumLineLength)
        /// The bare message, delimited by the header's length.
        case raw
    }

    /// The tty path, e.g. `/dev/ttyACM0`.
    public let path: String
    /// The baud rate.
    public let baudRate: Int
    /// The framing.
    public let framing: Framing
    /// The largest message to send: with `nil`, 380 bytes (what Zephyr's default 384-byte
    /// buffer takes with console framing) until the device reports its `buf_size`, then that
    /// less the framing; a number fixes the limit (the `mtu=` of a serial URL).
    public let maximumFrameSize: Int?
    /// The clock that times raw framing's quiet period.
    public let clock: SMPClock
    private let logger: Logger

    /// With raw framing, the silence after which the start of a message is dropped, as the
    /// device drops its own.
    static let rawQuietPeriod = Duration.milliseconds(100)

    /// Creates a transport.
    /// - Parameters:
    ///   - path: the tty path.
    ///   - baudRate: bits per second.
    ///   - framing: console (default) or raw.
    ///   - maximumFrameSize: a fixed message limit; `nil` follows the device's `buf_size`.
    ///   - logger: logger (label `mcumgr.transport.serial` by default).
    ///   - clock: times raw framing's quiet period (100 ms): the continuous clock by default, a
    ///     manual one in tests. The port is read in real time whatever the clock.
    public init(
        path: String,
        baudRate: Int = 115_200,
        framing: Framing = .console(),
        maximumFrameSize: Int? = nil,
        logger: Logger? = nil,
        clock: SMPClock = .continuous
    ) {
        self.path = path
        self.baudRate = baudRate
        self.framing = framing
        self.maximumFrameSize = maximumFrameSize
        self.clock = clock
        self.logger = logger ?? Logger(label: "mcumgr.transport.serial")
    }

    public var endpointDescription: String { "serial://\(path)?baud=\(baudRate)" }

    public func connect() async throws -> any SMPConnection {
        guard TerminalSettings.standardBaudRates.contains(baudRate) else {
            throw SMPTransportError(
                .invalidAddress,
                "baud rate \(baudRate) is not one of \(TerminalSettings.standardBaudRates.map(String.init).joined(separator: ", "))"
            )
        }
        let port: SerialPort
        do {
            port = try SerialPort(path: path, baudRate: baudRate)
        } catch {
            throw SMPTransportError(.connectionFailed, "cannot open \(path)", cause: error)
        }
        port.discardInput()
        logger.debug("opened", metadata: ["path": "\(path)", "baud": "\(baudRate)", "framing": "\(framing)"])
        switch framing {
        case .console(let lineLength):
            return SerialConnection(
                port: port,
                receiver: SerialReceiver(SerialFrameDecoder(), quietPeriod: nil, now: clock.elapsed()),
                lineLength: lineLength,
                maximumFrameSize: maximumFrameSize,
                clock: clock,
                logger: logger
            )
        case .raw:
            return SerialConnection(
                port: port,
                receiver: SerialReceiver(SMPStreamDecoder(), quietPeriod: Self.rawQuietPeriod, now: clock.elapsed()),
                lineLength: nil,
                maximumFrameSize: maximumFrameSize,
                clock: clock,
                logger: logger
            )
        }
    }
}

/// An open serial conversation, generic over its framing.
final class SerialConnection<Decoder: SMPFrameDecoding>: SMPConnection {
    let maximumFrameSize: Int
    let frames: AsyncThrowingStream<[UInt8], any Error>
    let deviceBufferOverhead: Int
    let frameSizeFollowsDevice: Bool
    let frameSizeIsChosen: Bool
    private let port: SerialPort
    private let lineLength: Int?
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation

    init(
        port: SerialPort,
        receiver: SerialReceiver<Decoder>,
        lineLength: Int?,
        maximumFrameSize: Int?,
        clock: SMPClock,
        logger: Logger
    ) {
        self.port = port
        self.lineLength = lineLength
        self.maximumFrameSize = maximumFrameSize ?? 380
        self.frameSizeFollowsDevice = maximumFrameSize == nil
        self.frameSizeIsChosen = maximumFrameSize != nil
        // With console framing the length prefix and CRC sit in the device's buffer too.
        self.deviceBufferOverhead = lineLength == nil ? 0 : SerialFraming.packetOverhead
        (frames, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        let continuation = self.continuation
        BlockingReadLoop.start(name: "mcumgr.serial.read", state: receiver) { receiver in
            guard !port.isClosed else {
                continuation.finish()
                return false
            }
            do {
                // The read waits in real time (short slices, to notice a close); the quiet period
                // is measured on the clock.
                let bytes = try port.read(timeout: SerialTransport.rawQuietPeriod)
                if bytes.isEmpty {
                    receiver.idle(at: clock.elapsed())
                    return true
                }
                for event in receiver.receive(bytes, at: clock.elapsed()) {
                    switch event {
                    case .frame(let frame): continuation.yield(frame)
                    case .console(let line):
                        logger.debug("console", metadata: ["text": "\(String(decoding: line, as: UTF8.self))"])
                    case .discarded(let error): logger.debug("dropped serial input", metadata: ["reason": "\(error)"])
                    }
                }
                return true
            } catch {
                continuation.finish(throwing: SMPTransportError(.disconnected, "\(port.path) failed", cause: error))
                return false
            }
        }
    }

    func send(_ frame: [UInt8]) async throws {
        guard frame.count <= maximumFrameSize || frameSizeFollowsDevice else {
            throw SMPTransportError.frameTooLarge(
                size: frame.count,
                limit: maximumFrameSize,
                "\(frame.count) bytes exceed the \(maximumFrameSize)-byte serial limit"
            )
        }
        let bytes = try lineLength.map { try SerialFraming.encode(frame, maximumLineLength: $0) } ?? frame
        do {
            try port.write(bytes)
        } catch {
            throw SMPTransportError(.disconnected, "writing to \(port.path) failed", cause: error)
        }
    }

    func close() async {
        port.close()
        continuation.finish()
    }
}
