import Foundation
import Logging
import SMPCore
import SMPPOSIX

/// Serves a ``SimulatedDevice`` on a pseudo-terminal, as a Zephyr UART transport: SMP over the
/// console (base64 lines, `06 09`/`04 14` markers, CRC-16) or raw UART, paced like a real UART
/// at the chosen baud rate (10 bits per byte, both directions). Full duplex: requests keep
/// arriving while the device answers; each packet takes a buffer of the device's pool from its
/// first line until the device has sent its answer.
///
/// Clients open ``slavePath`` as a serial port, e.g. `smpmgr --port /dev/pts/3`.
public final class SimulatedSerialServer: Sendable {
    /// How SMP frames travel on the line.
    public enum Framing: String, Sendable, Hashable, CaseIterable {
        /// SMP over console (`CONFIG_MCUMGR_TRANSPORT_UART`, MCUboot serial recovery).
        case console
        /// Raw UART (`CONFIG_MCUMGR_TRANSPORT_RAW_UART`): bare frames, split by the header length.
        case raw
    }

    /// The device served.
    public let device: SimulatedDevice
    /// The framing.
    public let framing: Framing
    /// The simulated line speed in bits per second; `nil` for no pacing.
    public let baudRate: Int?
    private let terminal: PseudoTerminal
    private let stream: AsyncStream<Event>
    private let continuation: AsyncStream<Event>.Continuation
    private let worker = TaskBox()
    private let logger = Logger(label: "mcumgr.simulator.serial")

    enum Event: Sendable {
        case bytes([UInt8])
        case idle
        /// Serial recovery has sent its answer and reads again.
        case answered
    }

    /// Opens the pseudo-terminal.
    /// - Parameters:
    ///   - device: the device to serve.
    ///   - framing: console or raw framing.
    ///   - baudRate: the line speed to simulate; `nil` disables pacing.
    /// - Throws: `SystemCallError` if no pseudo-terminal can be opened.
    public init(device: SimulatedDevice, framing: Framing = .console, baudRate: Int? = 115_200) throws(SystemCallError)
    {
        self.device = device
        self.framing = framing
        self.baudRate = baudRate
        terminal = try PseudoTerminal()
        (stream, continuation) = AsyncStream.makeStream(of: Event.self)
    }

    /// The path a client opens, e.g. `/dev/pts/3`.
    public var slavePath: String { terminal.slavePath }

    /// The endpoint as a connection URL, e.g. `serial:///dev/pts/3` (baud and framing are added
    /// when they differ from 115200 and console).
    public var endpointURL: String {
        var query: [String] = []
        if let baudRate, baudRate != 115_200 { query.append("baud=\(baudRate)") }
        if framing != .console { query.append("framing=\(framing.rawValue)") }
        return "serial://\(slavePath)" + (query.isEmpty ? "" : "?" + query.joined(separator: "&"))
    }

    /// Time the line needs for a number of bytes at the baud rate.
    func lineTime(_ count: Int) -> Duration {
        guard let baudRate, baudRate > 0 else { return .zero }
        return .microseconds(Int64(count) * 10 * 1_000_000 / Int64(baudRate))
    }

    /// Starts serving. Calling it again has no effect.
    public func start() {
        guard worker.claim() else { return }
        let terminal = self.terminal
        let continuation = self.continuation
        // The loop's state: reads in a row that found nothing.
        BlockingReadLoop.start(name: "smp-simulator-pty", state: 0) { quiet in
            guard !terminal.isClosed else {
                continuation.finish()
                return false
            }
            let bytes = (try? terminal.read(maximumCount: 4096, timeout: .milliseconds(50))) ?? []
            if bytes.isEmpty {
                quiet += 1
                // Raw UART drops a partial frame after a receive timeout (~0.5 s).
                if quiet == 10 { continuation.yield(.idle) }
            } else {
                quiet = 0
                continuation.yield(.bytes(bytes))
            }
            return true
        }
        let framing = self.framing
        let device = self.device
        let stream = self.stream
        let logger = self.logger
        worker.set(
            Task { [self] in
                var console = SerialFrameDecoder()
                var raw = SMPStreamDecoder()
                // What runs after each boot shapes the receiver: MCUboot's serial recovery keeps
                // shorter lines and smaller messages than the application.
                var limits: SimulatedDevice.ReceiveLimits?
                // Zephyr's serial transport takes a pool buffer when a packet starts and keeps it
                // until the work queue is done with it: a packet that starts when none is free is
                // lost. `inProgress` is the packet being received: `.some(nil)` when it found none.
                var inProgress: SimulatedDevice.ReceiveBuffer??
                // MCUboot's serial recovery reads lines into a few buffers while it handles one
                // message, and takes the next line only when it has answered.
                var recoveryLines: RecoveryUART?
                var recoveryBusy = false
                let transmit: SimulatedDevice.Transmit = { delivery in
                    // The work queue waits while the UART sends the answer.
                    for scheduled in delivery.responses {
                        if scheduled.delay > .zero { try? await Task.sleep(for: scheduled.delay) }
                        if framing == .console {
                            guard let lines = try? SerialFraming.encode(scheduled.frame) else { continue }
                            await self.write(lines)
                        } else {
                            await self.write(scheduled.frame)
                        }
                    }
                }
                let recoveryTransmit: SimulatedDevice.Transmit = { [continuation] delivery in
                    await transmit(delivery)
                    continuation.yield(.answered)
                }
                for await event in stream {
                    var events: [SMPFramingEvent] = []
                    switch event {
                    case .answered:
                        recoveryBusy = false
                    case .idle:
                        guard framing == .raw, raw.bufferedByteCount > 0 else { continue }
                        raw.reset()
                        if let held = inProgress ?? nil { await device.releaseBuffer(held) }
                        inProgress = nil
                        continue
                    case .bytes(let bytes):
                        // The bytes took this long to arrive over the simulated UART.
                        let time = lineTime(bytes.count)
                        if time > .zero { try? await Task.sleep(for: time) }
                        let current = await device.receiveLimits
                        if current != limits {
                            limits = current
                            // A line is kept up to its limit, newline included; a longer one is cut.
                            console = SerialFrameDecoder(
                                maximumPacketSize: current.bufferSize,
                                maximumLineLength: current.lineLength ?? 4096
                            )
                            raw = SMPStreamDecoder(maximumFrameSize: max(current.bufferSize, SMPHeader.size))
                            if let held = inProgress ?? nil { await device.releaseBuffer(held) }
                            inProgress = nil
                            recoveryLines = current.lineBuffers.map {
                                RecoveryUART(lineBuffers: $0, maximumLineLength: current.lineLength ?? 128)
                            }
                            recoveryBusy = false
                        }
                        if framing == .console, var lines = recoveryLines {
                            let lost = lines.linesLost
                            lines.receive(bytes)
                            if lines.linesLost > lost {
                                logger.debug(
                                    "serial recovery lost \(lines.linesLost - lost) line(s): every line buffer was full"
                                )
                            }
                            recoveryLines = lines
                        } else {
                            events = framing == .console ? console.feed(bytes) : raw.feed(bytes)
                        }
                    }
                    if framing == .console, var lines = recoveryLines {
                        // Recovery's main loop: one message at a time, from the waiting lines.
                        while !recoveryBusy, let line = lines.takeLine() {
                            for case .frame(let frame) in console.feed(line) {
                                recoveryBusy = await device.receive(frame, transmit: recoveryTransmit)
                            }
                        }
                        recoveryLines = lines
                        continue
                    }
                    for event in events {
                        switch event {
                        case .frame(let frame):
                            let buffer: SimulatedDevice.ReceiveBuffer?
                            if let started = inProgress {
                                buffer = started
                                inProgress = nil
                            } else {
                                buffer = await device.reserveBuffer()
                            }
                            if let buffer {
                                await device.receive(frame, in: buffer, release: .afterTransmit, transmit: transmit)
                            } else {
                                logger.debug("dropped a packet: no free buffer, or the device is rebooting")
                            }
                        case .discarded(let error):
                            logger.debug("dropped: \(error)")
                            if let held = inProgress ?? nil { await device.releaseBuffer(held) }
                            inProgress = nil
                        case .console:
                            continue
                        }
                    }
                    let receiving = framing == .console ? console.isReceivingPacket : raw.bufferedByteCount > 0
                    if receiving && inProgress == nil {
                        inProgress = .some(await device.reserveBuffer())
                    } else if !receiving, let held = inProgress {
                        if let held { await device.releaseBuffer(held) }
                        inProgress = nil
                    }
                }
            }
        )
    }

    /// Writes bytes paced at the baud rate, in small pieces as a UART FIFO drains.
    private func write(_ bytes: [UInt8]) async {
        let piece = 64
        var start = 0
        while start < bytes.count {
            let end = min(start + piece, bytes.count)
            do {
                try terminal.write(Array(bytes[start..<end]))
            } catch {
                logger.debug("write: \(error)")
                return
            }
            let time = lineTime(end - start)
            if time > .zero { try? await Task.sleep(for: time) }
            start = end
        }
    }

    /// Stops serving and closes the pseudo-terminal; returns when the reader thread and the
    /// worker ended.
    public func stop() async {
        terminal.close()
        if worker.claim() { continuation.finish() }
        await worker.task?.value
    }
}
