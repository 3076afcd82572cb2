import SMPCore

/// The bookkeeping of requests in flight, as a pure state machine (no I/O, no clocks).
///
/// A logical request may be sent several times (retries after timeouts); each attempt gets its
/// own sequence number, and an answer to *any* attempt completes the request, since every
/// attempt carried the same payload. An answer that matches no pending attempt — a late reply
/// after the request completed, a duplicate, a reply for another client — is reported as
/// unmatched and dropped, never handed to the next request.
///
/// Sequence numbers increase by one and wrap at 255, skipping numbers still in flight, so a
/// number is reused only after 255 others (what the Zephyr docs ask of clients).
struct PendingRequests<Waiter> {
    /// What an attempt expects back; a frame that matches the sequence but not this is dropped.
    struct Expectation: Hashable {
        var group: SMPGroup
        var command: UInt8
        var operation: SMPOperation
    }

    private struct Entry {
        var request: Int
        var expectation: Expectation
    }

    private var attempts: [UInt8: Entry] = [:]
    private var waiters: [Int: Waiter] = [:]
    private var sequencesOfRequest: [Int: [UInt8]] = [:]
    private var nextRequestID = 0
    private(set) var nextSequence: UInt8

    /// Creates an empty table.
    /// - Parameter firstSequence: the first sequence number to hand out (random in production,
    ///   fixed in tests).
    init(firstSequence: UInt8) {
        nextSequence = firstSequence
    }

    /// Number of requests waiting for an answer.
    var count: Int { waiters.count }

    /// Whether a request is still waiting for its answer.
    func contains(_ request: Int) -> Bool { waiters[request] != nil }

    /// Registers a new logical request.
    /// - Parameter waiter: whatever resumes the caller (a continuation).
    /// - Returns: the request's identifier.
    mutating func add(_ waiter: Waiter) -> Int {
        let id = nextRequestID
        nextRequestID += 1
        waiters[id] = waiter
        sequencesOfRequest[id] = []
        return id
    }

    /// Allocates a sequence number for a new attempt of a request.
    /// - Returns: the sequence number, or `nil` if all 256 are in flight or the request is gone.
    mutating func attempt(_ request: Int, expecting expectation: Expectation) -> UInt8? {
        guard waiters[request] != nil, attempts.count < 256 else { return nil }
        while attempts[nextSequence] != nil { nextSequence &+= 1 }
        let sequence = nextSequence
        nextSequence &+= 1
        attempts[sequence] = Entry(request: request, expectation: expectation)
        sequencesOfRequest[request, default: []].append(sequence)
        return sequence
    }

    /// What a received frame means for the table.
    enum Match {
        /// It answers `request`, whose waiter is returned and removed with all its attempts.
        case answered(request: Int, waiter: Waiter)
        /// No pending attempt has this sequence number.
        case unknownSequence
        /// The sequence is pending but group, command or operation differ: not our answer.
        case mismatched(expected: Expectation)
    }

    /// Matches a received header against the pending attempts.
    /// - Parameter header: the received frame's header.
    /// - Returns: what the frame is.
    mutating func match(_ header: SMPHeader) -> Match {
        guard let entry = attempts[header.sequence] else { return .unknownSequence }
        let expected = entry.expectation
        guard header.group == expected.group, header.command == expected.command,
            header.operation == expected.operation
        else { return .mismatched(expected: expected) }
        guard let waiter = remove(entry.request) else { return .unknownSequence }
        return .answered(request: entry.request, waiter: waiter)
    }

    /// Removes a request and all its attempts (after completion, a final timeout, or cancellation).
    /// - Parameter request: the request.
    /// - Returns: its waiter, if it was still pending.
    @discardableResult
    mutating func remove(_ request: Int) -> Waiter? {
        for sequence in sequencesOfRequest[request] ?? [] { attempts[sequence] = nil }
        sequencesOfRequest[request] = nil
        return waiters.removeValue(forKey: request)
    }

    /// Removes every request, returning the waiters (for a disconnect).
    mutating func removeAll() -> [Waiter] {
        let all = Array(waiters.values)
        attempts.removeAll()
        waiters.removeAll()
        sequencesOfRequest.removeAll()
        return all
    }
}
