import SMPCore
import SMPLink

/// A request waiting for its answer: what its attempts send, and when the current one times out.
struct RequestTimeout: Sendable {
    /// The frame's bytes; each attempt rewrites the version and sequence number in place.
    var frame: [UInt8]
    var expectation: SMPClient.Expectation
    /// The request's name for messages (`os command 0 (Echo)`): group and number alone mean
    /// nothing to a person.
    var name: String
    /// Per attempt; `nil` when the caller times the request out (no watchdog here).
    var timeout: Duration?
    var retries: Int
    var idempotent: Bool
    /// Attempts sent before the current one.
    var attempt = 0
    /// When the current attempt times out; `nil` while it is being sent.
    var deadline: Duration?
    /// The task that times out the current attempt; cancelled by the answer.
    var watchdog: Task<Void, Never>?
}

// Timeouts and retries: a watchdog task per attempt, cancelled by its answer.
//
// One timer per client for every request instead (armed for the earliest deadline, an answered
// request simply leaving the table) was built and measured: in the test suite — hundreds of
// in-process simulated devices sharing two threads — tests with 150 ms timeouts then failed in
// every full run under load where this design passed (A/B in issue 23's report); the cause was not
// found. A transfer's chunks, which were most of the watchdogs (a task, a sleep and its
// cancellation for every 1.4 KiB), are timed by their driver instead, with one timer per upload
// whose expiries queue behind the answers already delivered (`UploadDriver`); they are submitted
// with no timeout here.
extension SMPClient {
    /// Starts timing out the attempt just sent.
    func watch(_ id: Int, deadline: Duration) {
        guard let entry = timeouts[id], let timeout = entry.timeout else { return }
        let clock = configuration.clock
        timeouts[id]?.watchdog = Task { [weak self] in
            do {
                try await clock.sleep(timeout)
            } catch {
                return  // answered, failed or withdrawn
            }
            await self?.expire(id, deadline: deadline)
        }
    }

    /// Stops timing a request out (it was answered, failed or withdrawn).
    func unwatch(_ id: Int) {
        timeouts.removeValue(forKey: id)?.watchdog?.cancel()
    }

    /// An attempt got no answer in time: send the next one, or fail the request.
    private func expire(_ id: Int, deadline: Duration) async {
        // A watchdog of an earlier attempt finds a later deadline and leaves it.
        guard pending.contains(id), let entry = timeouts[id], entry.deadline == deadline, let timeout = entry.timeout
        else { return }
        if entry.attempt < entry.retries {
            timeouts[id]?.attempt += 1
            timeouts[id]?.deadline = nil
            await sendAttempt(id)
            return
        }
        let what = entry.name
        guard entry.idempotent else {
            fail(
                id,
                SMPTransportError(
                    .outcomeUnknown,
                    "no answer to \(what) within \(timeout): it may or may not have been carried out, and it is not sent twice"
                )
            )
            return
        }
        fail(
            id,
            SMPTransportError(.timeout, "no answer to \(what) after \(entry.retries + 1) attempts of \(timeout)")
        )
    }
}
