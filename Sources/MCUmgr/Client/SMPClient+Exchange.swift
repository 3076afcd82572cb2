import SMPCore
import SMPLink

/// A request frame as sent and the device's answer, whole: for tools that show the wire, such as
/// the web page's raw view.
public struct SMPExchange: Sendable, Hashable {
    /// The request as it went out: the version and sequence number of the attempt answered.
    public var request: SMPFrame
    /// The device's answer, undecoded: an error answer is an answer here, not a thrown error.
    public var response: SMPFrame

    /// Creates an exchange.
    /// - Parameters:
    ///   - request: the frame sent.
    ///   - response: the frame received.
    public init(request: SMPFrame, response: SMPFrame) {
        self.request = request
        self.response = response
    }
}

extension SMPClient {
    /// Sends a frame of any group, command and operation with the payload as given, and returns
    /// the answer undecoded — for commands this library has no type for (an application's own
    /// group), and for looking at the wire.
    ///
    /// The header's version and sequence number are the client's, as for every request. A read
    /// is sent again after a timeout (up to the configuration's retries); a write is sent once,
    /// since nothing says what it changes. Refusals (`EBUSY`, errors) are answers: nothing is
    /// resent for them and nothing is thrown.
    /// - Parameters:
    ///   - request: the frame to send; its operation must be `read` or `write`, its sequence
    ///     number and version are replaced.
    ///   - timeout: per attempt; `nil` uses the configuration's.
    /// - Returns: the request as sent and the answer.
    /// - Throws: `SMPError` `.unexpectedOperation` for a response operation;
    ///   `SMPTransportError` (`.timeout`, `.outcomeUnknown` for a write, `.frameTooLarge`,
    ///   `.disconnected`); `CancellationError`.
    public func exchange(_ request: SMPFrame, timeout: Duration? = nil) async throws -> SMPExchange {
        try checkOpen()
        let header = request.header
        guard let responseOperation = header.operation.response else {
            throw SMPError(
                .unexpectedOperation,
                "\(header.group) command \(header.command): operation \(header.operation) is not a request"
            )
        }
        let idempotent = header.operation == .read
        let sentVersion = version
        let promise = ResponsePromise()
        let id = try await start(
            encoded: request.bytes,
            expectation: Expectation(group: header.group, command: header.command, operation: responseOperation),
            type: "raw",
            timeout: timeout ?? configuration.timeout,
            retries: idempotent ? max(0, configuration.retries) : 0,
            idempotent: idempotent,
            waiter: .promise(promise)
        )
        let answer = try await withTaskCancellationHandler {
            try await promise.value()
        } onCancel: {
            Task { await self.fail(id, CancellationError()) }
        }
        var sent = request.bytes
        SMPFrame.restamp(&sent, version: sentVersion, sequence: answer.header.sequence)
        return SMPExchange(request: try SMPFrame(parsing: sent), response: answer)
    }
}
