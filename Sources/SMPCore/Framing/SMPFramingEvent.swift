/// What a receive-side framer found in the bytes it was fed.
public enum SMPFramingEvent: Sendable, Hashable {
    /// A complete SMP message (header and payload).
    case frame([UInt8])
    /// A line of console or log text that shares the serial port with SMP (without its newline).
    case console([UInt8])
    /// Bytes that were dropped, and why: a bad CRC, bad base64, an impossible length. Zephyr
    /// drops such packets silently, so the sender sees only a timeout; we report them for logs.
    case discarded(SMPError)
}

/// A receive-side framer: bytes in, complete messages (and what else it saw) out.
///
/// Both decoders conform, so a transport can be generic over its framing and the tests can
/// drip-feed every framer the same way.
public protocol SMPFrameDecoding: Sendable {
    /// Feeds received bytes, split anywhere.
    /// - Parameter bytes: the bytes.
    /// - Returns: the events these bytes completed, in order.
    mutating func feed(_ bytes: some Sequence<UInt8>) -> [SMPFramingEvent]
    /// Discards any partially received message.
    mutating func reset()
}
