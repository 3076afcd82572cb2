import SMPBytes
import SMPHCI
import SMPPOSIX

/// One controller over H4: packets out as written, packets in as a stream, read on a thread of
/// the link's own (`BlockingReadLoop`).
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
    /// Why the reader ended, once it has: a write after that fails with this reason, not with
    /// the `EBADF` or `EPIPE` of the channel the reader closed.
    private let endReason = Locked<(any Error & Sendable)?>(nil)

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
        let endReason = endReason
        BlockingReadLoop.start(name: "mcumgr-hci-reader", state: H4Decoder()) { decoder in
            H4Link.readOnce(channel, &decoder, endReason, continuation)
        }
    }

    /// One read: every whole packet it completes goes out; returns `false` when the link ended.
    private static func readOnce(
        _ channel: any HCIByteChannel,
        _ decoder: inout H4Decoder,
        _ endReason: Locked<(any Error & Sendable)?>,
        _ continuation: AsyncStream<Input>.Continuation
    ) -> Bool {
        do {
            // A bounded wait, so that the loop notices a close even on a channel that never ends.
            guard let bytes = try channel.read(timeout: .milliseconds(500)) else {
                let closed = HCIError(.protocolViolation, "the controller closed the connection")
                endReason.withLock { $0 = $0 ?? closed }
                continuation.yield(.ended(closed))
                continuation.finish()
                return false
            }
            if bytes.isEmpty { continuation.yield(.idle) }
            decoder.append(bytes)
            while let packet = try decoder.next() { continuation.yield(.packet(packet)) }
            return true
        } catch {
            // Recorded before the close, so that a write racing with it reports this reason.
            endReason.withLock { $0 = $0 ?? error }
            channel.close()
            continuation.yield(.ended(error))
            continuation.finish()
            return false
        }
    }

    /// Writes one packet.
    /// - Throws: why the reader ended, if it has (the controller closed the connection, the
    ///   stream lost its framing); else `SystemCallError` when the channel is gone.
    func send(_ packet: HCIPacket) throws {
        let bytes = H4Encoder.encode(packet)
        do {
            try writeLock.withLock { _ in try channel.write(bytes) }
        } catch {
            throw endReason.withLock { $0 } ?? error
        }
    }

    /// Closes the channel; `inputs` ends soon after.
    func close() { channel.close() }
}
