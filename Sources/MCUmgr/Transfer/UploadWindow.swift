/// The pipelining state of one upload, as a pure state machine (no I/O, no clocks).
///
/// Chunks are sent ahead at predicted offsets while fewer than the window are in flight. The
/// device is the truth: every answer carries the offset it expects next. An answer that
/// confirms more than a chunk (a later ack covering a lost one) advances past it; an answer
/// that expects an earlier offset (a chunk was lost or trimmed) rewinds to it and abandons the
/// chunks sent beyond it, unless that offset is already being re-sent.
struct UploadWindow: Sendable, Hashable {
    /// What the driver does after an answer.
    enum Outcome: Equatable, Sendable {
        /// Keep going; cancel these in-flight chunks (by start offset), they are no longer useful.
        case proceed(abandon: [Int])
        /// The device confirmed every byte.
        case finished
        /// The device answered offset 0 mid-transfer: it lost the session (reboot, another
        /// client, an erase); start again with a session-opening chunk.
        case restart
    }

    let total: Int
    private(set) var confirmed: Int
    private(set) var next: Int
    private(set) var inFlight: [Int: Int] = [:]
    private(set) var bytesSent = 0
    /// Every byte was sent at least once.
    private(set) var sentEverything = false

    /// Starts after the session-opening chunk, from the offset the device returned.
    init(total: Int, deviceOffset: Int) {
        self.total = total
        confirmed = min(deviceOffset, total)
        next = confirmed
    }

    var isFinished: Bool { confirmed >= total }
    var hasMoreToSend: Bool { next < total }

    /// Records a chunk being sent at ``next``.
    /// - Parameter size: data bytes in the chunk (> 0).
    /// - Returns: its start offset.
    mutating func send(size: Int) -> Int {
        let start = next
        inFlight[start] = start + size
        next += size
        bytesSent += size
        if next >= total { sentEverything = true }
        return start
    }

    /// Applies the device's answer to the chunk that started at `start`.
    mutating func acknowledge(start: Int, deviceOffset: Int) -> Outcome {
        let wasInFlight = inFlight.removeValue(forKey: start) != nil
        if deviceOffset == 0 && start > 0 && confirmed > 0 && wasInFlight {
            return .restart
        }
        confirmed = min(total, max(confirmed, deviceOffset))
        if confirmed >= total { return .finished }
        var abandon: [Int] = []
        // Chunks wholly below the confirmed offset need no answer any more.
        for (chunkStart, chunkEnd) in inFlight where chunkEnd <= confirmed { abandon.append(chunkStart) }
        if wasInFlight && deviceOffset == confirmed && deviceOffset < next {
            // The device wants an earlier offset. If this answer is for a chunk beyond that
            // offset, the chunk that should have filled the gap was lost: re-send it now rather
            // than wait for its timeout. Otherwise rewind unless that offset is already in flight.
            let gapChunkLost = deviceOffset < start
            if gapChunkLost || inFlight[deviceOffset] == nil {
                for (chunkStart, _) in inFlight
                where chunkStart > deviceOffset || (gapChunkLost && chunkStart == deviceOffset) {
                    abandon.append(chunkStart)
                }
                next = deviceOffset
            }
        } else if deviceOffset > next {
            next = deviceOffset
        }
        for chunkStart in abandon { inFlight[chunkStart] = nil }
        return .proceed(abandon: abandon.sorted())
    }

    /// Sends again from the confirmed offset (when everything sent was answered but the device
    /// still wants more).
    mutating func rewindToConfirmed() {
        next = confirmed
    }

    /// The device did not take the chunk at `start` (ENOMEM, EBUSY, no answer). Nothing after
    /// it can be written — the device only accepts the offset it expects — so every chunk sent
    /// from `start` on is abandoned and sending continues at `start`.
    /// - Parameter start: the refused chunk's offset.
    /// - Returns: the offsets of the abandoned chunks still in flight (the refused one included);
    ///   empty when the device has confirmed past `start` since.
    mutating func refused(start: Int) -> [Int] {
        guard start >= confirmed else {
            inFlight[start] = nil
            return []
        }
        let abandoned = inFlight.keys.filter { $0 >= start }.sorted()
        for chunkStart in abandoned { inFlight[chunkStart] = nil }
        next = min(next, start)
        return abandoned
    }

    /// Whether a chunk that failed (timeout, cancellation) still matters.
    mutating func chunkFailed(start: Int) -> Bool {
        guard let end = inFlight.removeValue(forKey: start) else { return false }
        return end > confirmed
    }
}
