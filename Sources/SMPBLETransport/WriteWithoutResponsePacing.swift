/// When a write without response may go out on a link whose controller reports room with a flag
/// and a callback (CoreBluetooth's `canSendWriteWithoutResponse` and
/// `peripheralIsReady(toSendWriteWithoutResponse:)`), such that a missing callback never stalls
/// the writer for good.
///
/// The ready callback is known not to come on some macOS versions, and the flag can then stay
/// `false`: a writer that waits for either would hang. Nordic's iOS library writes anyway when
/// its short wait (15 ms) ends without the callback; so does this: a wait that ends by its timer
/// while the flag is still down lets exactly the next write through. A write into a full buffer
/// may be dropped by the controller; the SMP client's timeout and retry recover a lost request,
/// whereas nothing recovers a hung writer.
///
/// Used on the link's queue only (a value type without locks).
struct WriteWithoutResponsePacing: Sendable, Equatable {
    /// A wait ran out with the flag still down: the next write goes regardless of it.
    private(set) var forcesNextWrite = false

    /// Whether to write now; a forced write uses up the force.
    /// - Parameter canSend: the controller's flag (`canSendWriteWithoutResponse`).
    /// - Returns: `true` to write, `false` to wait (``waitEnded(byReadySignal:canSend:)`` after).
    mutating func mayWrite(canSend: Bool) -> Bool {
        guard canSend || forcesNextWrite else { return false }
        forcesNextWrite = false
        return true
    }

    /// A wait for room ended.
    /// - Parameters:
    ///   - byReadySignal: the ready callback ended it (not the timer).
    ///   - canSend: the controller's flag when it ended.
    mutating func waitEnded(byReadySignal: Bool, canSend: Bool) {
        // The callback says room was made, even if the flag has dropped again since (another write
        // took it): ask again normally. Only the timer, with no room reported, forces a write.
        if !byReadySignal && !canSend { forcesNextWrite = true }
    }

    /// Forgets a pending force, e.g. when the characteristic was replaced and writes start afresh.
    mutating func reset() {
        forcesNextWrite = false
    }
}
