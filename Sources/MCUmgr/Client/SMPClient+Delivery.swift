import SMPCore
import SMPLink

// Requests whose answers are handed over rather than awaited: a transfer keeps a window of
// chunks in flight and takes every answer from one inbox, on the client's executor, without a
// task per request.
extension SMPClient {
    /// Sends a request now and hands its outcome to `deliver`, called on the client's executor:
    /// the decoded answer, or the failure (a refusal, the last attempt timing out, the link
    /// dropping). Retries after timeouts, `EBUSY`/`ENOMEM` resends (with `resendingRefusals`) and
    /// the fall-back to v1 happen here, as for ``send(_:timeout:retries:)``. A request
    /// ``withdraw(_:)``n is never delivered.
    /// - Parameters:
    ///   - request: the request.
    ///   - timeout: per-attempt timeout; `nil` when the caller times the request out itself (and
    ///     ``withdraw(_:)``s it then): the client keeps no watchdog for it.
    ///   - retries: attempts after a timeout (0 for requests that are not idempotent).
    ///   - resendingRefusals: send again after `EBUSY` or `ENOMEM` (a growing pause each time);
    ///     `false` delivers them.
    ///   - deliver: takes the outcome.
    /// - Returns: the request's identifier, for ``withdraw(_:)``.
    /// - Throws: what sending the first attempt throws (`.frameTooLarge`, `.disconnected`, an
    ///   encoding error); nothing is delivered then.
    func submit<R: SMPRequest>(
        _ request: R,
        timeout: Duration?,
        retries: Int = 0,
        resendingRefusals: Bool = false,
        deliver: @escaping @Sendable (Result<R.Response, any Error>) -> Void
    ) async throws -> Int {
        try await submit(
            request,
            timeout: timeout,
            retries: request.isIdempotent ? max(0, retries) : 0,
            resendingRefusals: resendingRefusals,
            busyAttempts: 0,
            deliver: deliver
        )
    }

    private func submit<R: SMPRequest>(
        _ request: R,
        timeout: Duration?,
        retries: Int,
        resendingRefusals: Bool,
        busyAttempts: Int,
        deliver: @escaping @Sendable (Result<R.Response, any Error>) -> Void
    ) async throws -> Int {
        let sentVersion = version
        let waiter = ResponseWaiter.handler { [weak self] result in
            guard let self else {
                deliver(result.flatMap { frame in Result { try frame.decodeResponse(to: R.self) } })
                return
            }
            // Resolved only from the client's own methods (an answer, a timeout, a failure).
            self.assumeIsolated { client in
                let resend = Resend(
                    timeout: timeout,
                    retries: retries,
                    resendingRefusals: resendingRefusals,
                    busyAttempts: busyAttempts
                )
                client.handle(result, of: request, sentVersion: sentVersion, resend: resend, deliver: deliver)
            }
        }
        return try await start(request, timeout: timeout, retries: retries, waiter: waiter)
    }

    /// How a handed-over request is sent again after a refusal.
    private struct Resend: Sendable {
        var timeout: Duration?
        var retries: Int
        var resendingRefusals: Bool
        var busyAttempts: Int
    }

    /// Decodes an answer and delivers it, or sends the request again when the client would
    /// (`EBUSY`/`ENOMEM` within the busy retries, `rc 13` to a v2 request).
    private func handle<R: SMPRequest>(
        _ result: Result<SMPFrame, any Error>,
        of request: R,
        sentVersion: SMPVersion,
        resend: Resend,
        deliver: @escaping @Sendable (Result<R.Response, any Error>) -> Void
    ) {
        let frame: SMPFrame
        switch result {
        case .failure(let error):
            deliver(.failure(error))
            return
        case .success(let answer):
            frame = answer
        }
        do {
            deliver(.success(try frame.decodeResponse(to: R.self)))
        } catch let error as SMPDeviceError {
            let busy = resend.resendingRefusals ? resend.busyAttempts : Int.max
            guard shouldResend(after: error, sentVersion: sentVersion, busyAttempts: busy) else {
                deliver(.failure(error))
                return
            }
            var next = resend
            if error.isTransientRefusal { next.busyAttempts += 1 }
            let pause = error.isTransientRefusal ? configuration.busyBackoff * next.busyAttempts : .zero
            let clock = configuration.clock
            Task {
                do {
                    if pause > .zero { try await clock.sleep(pause) }
                    _ = try await self.submit(
                        request,
                        timeout: next.timeout,
                        retries: next.retries,
                        resendingRefusals: next.resendingRefusals,
                        busyAttempts: next.busyAttempts,
                        deliver: deliver
                    )
                } catch {
                    deliver(.failure(error))
                }
            }
        } catch {
            deliver(.failure(error))
        }
    }
}
