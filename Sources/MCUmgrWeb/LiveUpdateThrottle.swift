/// When a progress-only change may go to the tabs: at most one per ``interval``, and the last
/// one never dropped (it is sent once the interval has passed). Pure, so the rule is tested
/// without a clock.
struct LiveUpdateThrottle: Sendable {
    /// What to do with a progress change.
    enum Decision: Equatable, Sendable {
        /// Send it now.
        case sendNow
        /// Send the latest snapshot at this instant (schedule one send).
        case sendAt(ContinuousClock.Instant)
        /// A send is already scheduled; it will carry this change.
        case alreadyScheduled
    }

    /// The shortest time between two progress-only sends.
    let interval: Duration
    private var lastSent: ContinuousClock.Instant?
    private var scheduled = false

    init(interval: Duration) { self.interval = interval }

    /// A progress change arrived.
    /// - Parameter now: the time it arrived.
    mutating func progress(at now: ContinuousClock.Instant) -> Decision {
        // A scheduled send may run late (its task waits behind a busy actor): it still carries
        // this change, and sending now as well would make two sends one right after the other.
        if scheduled { return .alreadyScheduled }
        guard let lastSent, now - lastSent < interval else { return .sendNow }
        scheduled = true
        return .sendAt(lastSent + interval)
    }

    /// A snapshot went out (any change, or the scheduled one).
    /// - Parameter now: when.
    mutating func sent(at now: ContinuousClock.Instant) {
        lastSent = now
        scheduled = false
    }
}
