import SMPLink

/// The timing of a Bluetooth LE link on a virtual clock (seconds from the first connection):
/// which connection-event slot each LL packet takes, in each direction, and how full the
/// central's write buffer is. Pure; ``SimulatedBLEPeripheral`` owns one.
///
/// Slot `s` of a direction lies in connection event `s / n` (n = slots per event) and starts
/// `(s % n)` exchanges into it. A packet takes the first free slot that starts after it is ready.
struct BLELinkModel: Sendable {
    let profile: BLELinkProfile
    private var uplink: Direction
    private var downlink: Direction

    init(profile: BLELinkProfile) {
        self.profile = profile
        let interval = profile.connectionIntervalMilliseconds / 1000
        let exchange = profile.exchangeMicroseconds / 1_000_000
        uplink = Direction(slotsPerEvent: profile.centralSlotsPerEvent, interval: interval, exchange: exchange)
        downlink = Direction(slotsPerEvent: profile.peripheralSlotsPerEvent, interval: interval, exchange: exchange)
    }

    /// Queues a write of `length` bytes at time `now` if the controller has room.
    /// - Returns: when its last packet has been received by the peripheral, or `nil` when the
    ///   buffer is full.
    mutating func write(length: Int, at now: Double) -> Double? {
        let packets = profile.packets(forValueOf: length)
        let queued = uplink.queued(at: now)
        if queued > 0 && queued + packets > profile.writeBufferPackets { return nil }
        return uplink.schedule(packets: packets, at: now)
    }

    /// When a write of `length` bytes refused at `now` fits in the buffer.
    mutating func readyTime(length: Int, at now: Double) -> Double {
        let packets = profile.packets(forValueOf: length)
        return uplink.timeWhenQueued(atMost: max(0, profile.writeBufferPackets - packets), after: now)
    }

    /// Sends a notification of `length` bytes, ready at `now`.
    /// - Returns: when the central has received its last packet.
    mutating func notify(length: Int, at now: Double) -> Double {
        downlink.schedule(packets: profile.packets(forValueOf: length), at: now)
    }

    /// Starts a new connection at `now`: slots count from there, nothing is queued.
    mutating func reconnect(at now: Double) {
        uplink.restart(at: now)
        downlink.restart(at: now)
    }

    /// One direction's slots.
    struct Direction: Sendable {
        let slotsPerEvent: Int
        let interval: Double
        let exchange: Double
        private var origin = 0.0
        private var nextSlot = 0
        /// Start times of packets scheduled, oldest first (those before "now" are dropped lazily).
        private var starts: [Double] = []
        private var head = 0

        init(slotsPerEvent: Int, interval: Double, exchange: Double) {
            self.slotsPerEvent = slotsPerEvent
            self.interval = interval
            self.exchange = exchange
        }

        func start(ofSlot slot: Int) -> Double {
            origin + Double(slot / slotsPerEvent) * interval + Double(slot % slotsPerEvent) * exchange
        }

        /// The first slot starting at or after `time`.
        func firstSlot(notBefore time: Double) -> Int {
            let relative = max(0, time - origin)
            let event = Int((relative / interval).rounded(.down))
            var index = Int(((relative - Double(event) * interval) / exchange).rounded(.up))
            var eventIndex = event
            if index >= slotsPerEvent {
                eventIndex += 1
                index = 0
            }
            return eventIndex * slotsPerEvent + index
        }

        mutating func schedule(packets: Int, at now: Double) -> Double {
            var end = now
            for _ in 0..<max(1, packets) {
                let slot = max(nextSlot, firstSlot(notBefore: now))
                nextSlot = slot + 1
                let begin = start(ofSlot: slot)
                starts.append(begin)
                end = begin + exchange
            }
            return end
        }

        /// Packets not yet on air at `now`.
        mutating func queued(at now: Double) -> Int {
            while head < starts.count && starts[head] + exchange <= now { head += 1 }
            if head > 1024 {
                starts.removeFirst(head)
                head = 0
            }
            return starts.count - head
        }

        /// The time at which at most `limit` packets remain queued.
        mutating func timeWhenQueued(atMost limit: Int, after now: Double) -> Double {
            let queued = queued(at: now)
            guard queued > limit else { return now }
            // The packet that must leave: after it, `limit` remain.
            return starts[head + (queued - limit) - 1] + exchange
        }

        mutating func restart(at now: Double) {
            origin = now
            nextSlot = 0
            starts.removeAll()
            head = 0
        }
    }
}
