/// How many chunk requests a transfer keeps in flight, adapted to what the device shows it can
/// take. A pure value: the transfer engine reports answers and back-pressure, it answers with the
/// size to use.
///
/// Zephyr holds every request and every answer in one pool of `buf_count` buffers, so a window
/// of `buf_count − 1` is the most a device can take; the window starts there (or at what the
/// caller forced) and never goes above it.
/// - Back-pressure (`ENOMEM`, `EBUSY`, a chunk without an answer) halves the window, at least 1.
/// - Answers that move the transfer forward grow it again by one per window's worth of answers,
///   up to one below the smallest size that ran the device out of buffers (the pool does not
///   grow); after busy answers or silence, which pass, it probes that size again after
///   ``probeAfter`` answers in a row.
struct AdaptiveWindow: Sendable, Hashable {
    /// Why the window shrank.
    enum Pressure: Sendable, Hashable {
        /// `ENOMEM`: the device had no buffer for the answer.
        case outOfBuffers
        /// `EBUSY`: the device asked to be asked again later.
        case busy
        /// The request or its answer was lost.
        case noAnswer
    }

    /// Answers in a row after which a size that met passing back-pressure is tried again.
    static let probeAfter = 128

    /// The most requests ever in flight: the device's `buf_count − 1`, or the caller's window.
    let ceiling: Int
    /// Requests to keep in flight now.
    private(set) var size: Int
    /// Answers in a row since the last change.
    private var streak = 0
    /// The smallest size at which the device ran out of buffers; never used again.
    private var exhaustedAt: Int?
    /// The smallest size that met busy answers or silence; tried again after a long streak.
    private var troubledAt: Int?

    /// Creates a window.
    /// - Parameters:
    ///   - initial: the size to start with.
    ///   - ceiling: the largest size ever used.
    init(initial: Int, ceiling: Int) {
        self.ceiling = max(1, ceiling)
        size = min(max(1, initial), self.ceiling)
    }

    /// The device pushed back: halve the window.
    /// - Parameter pressure: what it did.
    /// - Returns: the new size, if it changed.
    mutating func backPressure(_ pressure: Pressure) -> Int? {
        streak = 0
        if pressure == .outOfBuffers {
            exhaustedAt = min(exhaustedAt ?? size, size)
        } else {
            troubledAt = min(troubledAt ?? size, size)
        }
        let smaller = max(1, size / 2)
        guard smaller != size else { return nil }
        size = smaller
        return size
    }

    /// An answer moved the transfer forward.
    /// - Returns: the new size, if it grew.
    mutating func answered() -> Int? {
        streak += 1
        var limit = ceiling
        if let exhaustedAt { limit = min(limit, exhaustedAt - 1) }
        if let troubledAt, streak < Self.probeAfter { limit = min(limit, troubledAt - 1) }
        guard size < limit, streak >= size else { return nil }
        if let troubledAt, size + 1 >= troubledAt { self.troubledAt = nil }
        size += 1
        streak = 0
        return size
    }
}
