import SMPBytes
import SMPHCI
import SMPPOSIX

/// One controller over H4: packets out as written, packets in as a stream, read on a thread of
/// the link's own (``BlockingReadLoop``).
///
/// The stream ends with the channel: the controller closed it, a read failed, or the bytes lost
/// their framing (an unknown packet indicator — nothing after it can be trusted).
final class H4Link: Sendable {
    /// What the reader reports.
    enum Input: Sendable {
        case packet(HCIPacket)
        /// Half a second passed without a byte: a chance to check deadlines.
        case idle
        /// The channel ended; the error says why (`nil`: closed here).
        case ended((any Error & Sendable)?)
    }

    let inputs: AsyncStream<Input>
    let description: String
    private let channel: any HCIByteChannel
    /// Writes from several tasks must not interleave their packets' bytes.
    private let writeLock = Locked(())

    /// Opens the channel and starts reading.
    /// - Parameter address: the controller.
    /// - Throws: `SystemCallError` when it cannot be opened.
    convenience init(_ address: HCIControllerAddress) throws {
        try self.init(channel: address.open(), description: address.description)
    }

    init(channel: any HCIByteChannel, description: String) {
        self.channel = channel
        self.description = description
        let (inputs, continuation) = AsyncStream.makeStream(of: Input.self)
        self.inputs = inputs
        BlockingReadLoop.start(name: "mcumgr-hci-reader", state: H4Decoder()) { decoder in
            H4Link.readOnce(channel, &decoder, continuation)
        }
    }

    /// One read: every whole packet it completes goes out; returns `false` when the link ended.
    private static func readOnce(
        _ channel: any HCIByteChannel,
        _ decoder: inout H4Decoder,
        _ continuation: AsyncStream<Input>.Continuation
    ) -> Bool {
        do {
            // A bounded wait, so that the loop notices a close even on a channel that never ends.
            guard let bytes = try channel.read(timeout: .milliseconds(500)) else {
                continuation.yield(.ended(HCIError(.protocolViolation, "the controller closed the connection")))
                continuation.finish()
                return false
            }
            if bytes.isEmpty { continuation.yield(.idle) }
            decoder.append(bytes)
            while let packet = try decoder.next() { continuation.yield(.packet(packet)) }
            return true
        } catch {
            channel.close()
            continuation.yield(.ended(error))
            continuation.finish()
            return false
        }
    }

    /// Writes one packet.
    /// - Throws: `SystemCallError` when the channel is gone.
    func send(_ packet: HCIPacket) throws {
        let bytes = H4Encoder.encode(packet)
        try writeLock.withLock { _ in try channel.write(bytes) }
    }

    /// Closes the channel; ``inputs`` ends soon after.
    func close() { channel.close() }
}
