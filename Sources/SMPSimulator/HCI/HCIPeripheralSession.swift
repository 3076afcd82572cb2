import Logging
import SMPBytes
import SMPCore
import SMPHCI
import SMPHCIHost

/// One central's connection to a ``SimulatedHCIPeripheral``: the GATT server over its ATT PDUs,
/// the SMP frames reassembled as Zephyr does (a pool buffer taken with a frame's first write) and
/// handed to the device, its answers notified in order.
struct HCIPeripheralSession: Sendable {
    let connection: HCIConnection
    let device: SimulatedDevice
    let logger: Logger
    private let server: Locked<GATTServer>
    private let outbox: AsyncStream<[UInt8]>
    private let outboxContinuation: AsyncStream<[UInt8]>.Continuation

    init(connection: HCIConnection, device: SimulatedDevice, name: String, logger: Logger) {
        self.connection = connection
        self.device = device
        self.logger = logger
        server = Locked(GATTServer(deviceName: name))
        (outbox, outboxContinuation) = AsyncStream.makeStream(of: [UInt8].self)
    }

    /// Serves until the connection ends.
    func run() async {
        let sender = Task { await sendNotifications() }
        var decoder = SMPStreamDecoder()
        var held: SimulatedDevice.ReceiveBuffer?
        do {
            for try await pdu in connection.attPDUs {
                let output = server.withLock { $0.receive(pdu) }
                if let reply = output.reply { try await connection.sendATT(reply) }
                if let data = output.smpData { await received(data, &decoder, &held) }
            }
        } catch {
            logger.info("central gone", metadata: ["reason": "\(error)"])
        }
        if let held { await device.releaseBuffer(held) }
        outboxContinuation.finish()
        await sender.value
    }

    /// A write of the SMP characteristic: whole frames go to the device.
    private func received(
        _ bytes: [UInt8],
        _ decoder: inout SMPStreamDecoder,
        _ held: inout SimulatedDevice.ReceiveBuffer?
    ) async {
        for case .frame(let frame) in decoder.feed(bytes) {
            let buffer: SimulatedDevice.ReceiveBuffer?
            if let started = held {
                buffer = started
                held = nil
            } else {
                buffer = await device.reserveBuffer()
            }
            guard let buffer else {
                logger.debug("lost a frame: no free buffer")
                continue
            }
            await device.receive(frame, in: buffer) { delivery in await self.deliver(delivery) }
        }
        if decoder.bufferedByteCount > 0, held == nil {
            // Zephyr takes a pool buffer with a frame's first fragment.
            held = await device.reserveBuffer()
        }
    }

    private func deliver(_ delivery: LinkDelivery) async {
        for scheduled in delivery.responses {
            if scheduled.delay > .zero { try? await Task.sleep(for: scheduled.delay) }
            outboxContinuation.yield(scheduled.frame)
        }
        if delivery.disconnect || (delivery.deviceResets && delivery.responses.isEmpty) {
            await connection.disconnect()
        } else if delivery.deviceResets {
            // The device runs on for its reset delay after answering, then reboots: the link drops.
            try? await Task.sleep(for: device.configuration.resetDelay)
            await connection.disconnect()
        }
    }

    /// Answers as notifications of at most MTU − 3 bytes (512 at most, an attribute's limit), one
    /// frame after another, each waiting for the controller's buffers.
    private func sendNotifications() async {
        for await frame in outbox {
            let length = min(512, server.withLock { $0.maximumNotificationLength })
            for fragment in BLEFragmentation.fragments(of: frame, maximumWriteLength: length) {
                do {
                    let pdu = try server.withLock { server throws(HCIError) in try server.notification(Array(fragment))
                    }
                    try await connection.waitForRoom()
                    try await connection.sendATT(pdu)
                } catch {
                    logger.debug("a response not notified", metadata: ["error": "\(error)"])
                    break
                }
            }
        }
    }
}
