import SMPCore

/// What the serial read thread does with the bytes it reads: frames them, and with raw framing
/// drops a message begun before a silence of the quiet period, as the device drops its own, so a
/// lost byte costs one message rather than shifting every later one.
///
/// Times are instants on the transport's clock (``SMPLink/SMPClock/elapsed``): the continuous
/// clock in use, a manual clock in tests. The state of the read loop, so the read thread alone
/// has it.
struct SerialReceiver<Decoder: SMPFrameDecoding>: Sendable {
    private var decoder: Decoder
    private let quietPeriod: Duration?
    private var lastInput: Duration

    /// - Parameters:
    ///   - decoder: the framing.
    ///   - quietPeriod: the silence after which a partial message is dropped; `nil` never drops
    ///     one (console framing, whose lines say where they end).
    ///   - now: the time the receiver starts.
    init(_ decoder: Decoder, quietPeriod: Duration?, now: Duration) {
        self.decoder = decoder
        self.quietPeriod = quietPeriod
        lastInput = now
    }

    /// Bytes read at `now`; a partial message older than the quiet period is dropped first.
    /// - Returns: the framing events the bytes complete.
    mutating func receive(_ bytes: [UInt8], at now: Duration) -> [SMPFramingEvent] {
        dropIfQuiet(at: now)
        lastInput = now
        return decoder.feed(bytes)
    }

    /// Nothing was read up to `now`: a partial message older than the quiet period is dropped.
    mutating func idle(at now: Duration) { dropIfQuiet(at: now) }

    private mutating func dropIfQuiet(at now: Duration) {
        if let quietPeriod, now - lastInput >= quietPeriod { decoder.reset() }
    }
}
