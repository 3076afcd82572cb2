import Foundation
import SMPBytes
import SMPCore

/// A request already on the link, whose answer is awaited with ``response()``.
///
/// Returned by ``SMPClient/submit(_:timeout:retries:resendingRefusals:)``. `EBUSY` and `ENOMEM`
/// answers (the device did not process the request) and a v2 refusal with `rc 13` are retried
/// transparently, as ``SMPClient/send(_:timeout:retries:)`` does — unless the submitter handles
/// refusals itself (the transfer engine, which shrinks its window instead).
public struct SMPPendingResponse<R: SMPRequest>: Sendable {
    let client: SMPClient
    let id: Int
    let promise: ResponsePromise
    let request: R
    /// The protocol version the request was first sent with (a v1 answer may switch the
    /// client's version before this handle reads the answer).
    let sentVersion: SMPVersion
    let timeout: Duration
    let retries: Int
    /// Whether `EBUSY` and `ENOMEM` answers are sent again here.
    let resendsRefusals: Bool

    /// Waits for the answer.
    /// - Returns: the device's response.
    /// - Throws: as ``SMPClient/send(_:timeout:retries:)``; `CancellationError` if the waiting
    ///   task is cancelled (the request is then withdrawn).
    public func response() async throws -> R.Response {
        var current = self
        var busyAttempts = 0
        while true {
            let sentVersion = current.sentVersion
            let frame = try await current.frame()
            do {
                return try frame.decodeResponse(to: R.self)
            } catch let error as SMPDeviceError {
                guard
                    await client.shouldResend(
                        after: error,
                        sentVersion: sentVersion,
                        busyAttempts: resendsRefusals ? busyAttempts : Int.max
                    )
                else {
                    throw error
                }
                if error.isTransientRefusal {
                    busyAttempts += 1
                    try await client.configuration.clock.sleep(client.configuration.busyBackoff * busyAttempts)
                }
                current = try await client.submit(
                    request,
                    timeout: timeout,
                    retries: retries,
                    resendingRefusals: resendsRefusals
                )
            }
        }
    }

    /// Withdraws the request: its answer, if one still comes, is dropped.
    public func cancel() async {
        await client.fail(id, CancellationError())
    }

    private func frame() async throws -> SMPFrame {
        let client = self.client
        let id = self.id
        return try await withTaskCancellationHandler {
            try await promise.value()
        } onCancel: {
            Task { await client.fail(id, CancellationError()) }
        }
    }
}

/// Whoever waits for a request's answer: a task awaiting a promise, or a handler the client calls
/// on its own executor (a transfer, whose driver takes every answer from one inbox).
enum ResponseWaiter: Sendable {
    case promise(ResponsePromise)
    case handler(@Sendable (Result<SMPFrame, any Error>) -> Void)

    func resolve(_ result: Result<SMPFrame, any Error>) {
        switch self {
        case .promise(let promise): promise.resolve(result)
        case .handler(let handler): handler(result)
        }
    }
}

/// A one-shot result that any number of tasks can await; resolved once by the client.
final class ResponsePromise: Sendable {
    private struct State {
        var result: Result<SMPFrame, any Error>?
        var waiters: [CheckedContinuation<SMPFrame, any Error>] = []
    }

    // Continuations are resumed outside the lock.
    private let state = Locked(State())

    func resolve(_ value: Result<SMPFrame, any Error>) {
        let toResume: [CheckedContinuation<SMPFrame, any Error>] = state.withLock { state in
            guard state.result == nil else { return [] }
            state.result = value
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in toResume { waiter.resume(with: value) }
    }

    func value() async throws -> SMPFrame {
        try await withCheckedThrowingContinuation { continuation in
            let ready: Result<SMPFrame, any Error>? = state.withLock { state in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}

extension SMPDeviceError {
    /// `EBUSY` or `ENOMEM`: the device turned the request away without processing it (busy, or
    /// no buffer free for the answer), so sending it again later is safe whatever it does.
    public var isTransientRefusal: Bool { returnCode == .busy || returnCode == .noMemory }
}
