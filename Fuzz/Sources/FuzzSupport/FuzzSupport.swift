// What the fuzz targets share: the seeded way they cut a byte stream, and the property check
// that turns a violated property into a crash libFuzzer records.

/// A tiny deterministic generator (xorshift64*) seeded from the input, so that a crashing input
/// replays exactly; it cuts streams the way the targets feed their decoders.
public struct Splitter {
    var state: UInt64
    /// The largest chunk `split` makes.
    public let largest: Int

    /// Creates a splitter.
    /// - Parameters:
    ///   - seed: two bytes of the input.
    ///   - largest: the largest chunk `split` makes (at least 1).
    public init(seed: UInt16, largest: Int = 1) {
        state = 0x9E37_79B9_7F4A_7C15 ^ UInt64(seed) &* 0x2545_F491_4F6C_DD1D
        if state == 0 { state = 1 }
        self.largest = max(1, largest)
    }

    /// The next pseudo-random number.
    public mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    /// Cuts `bytes` into chunks of 1...largest bytes (sometimes empty chunks, which are legal).
    /// - Parameter bytes: the stream.
    /// - Returns: the chunks, in order.
    public mutating func split(_ bytes: [UInt8]) -> [ArraySlice<UInt8>] {
        let largest = UInt64(self.largest)
        return cut(bytes) { roll in roll % 17 == 0 ? 0 : 1 + Int((roll >> 8) % largest) }
    }

    /// Notifications of 1...largest bytes, mostly full ones, as a real link sends them.
    /// - Parameters:
    ///   - bytes: the stream.
    ///   - largest: the largest notification (the ATT payload).
    /// - Returns: the notifications, in order.
    public mutating func notifications(_ bytes: [UInt8], largest: Int) -> [ArraySlice<UInt8>] {
        cut(bytes) { roll in roll % 4 == 0 ? 1 + Int((roll >> 8) % UInt64(largest)) : largest }
    }

    private mutating func cut(_ bytes: [UInt8], size: (UInt64) -> Int) -> [ArraySlice<UInt8>] {
        var chunks: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + size(next()))
            chunks.append(bytes[start..<end])
            start = end
        }
        return chunks
    }
}

/// Crashes (so libFuzzer records the input) when a property does not hold.
/// - Parameters:
///   - condition: the property.
///   - message: what was violated, for the report.
@inline(never)
public func check(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { fatalError("property violated: \(message())") }
}
