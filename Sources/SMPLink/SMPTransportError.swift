import SMPBytes

/// A failure below SMP: the link could not be opened, dropped, or did not answer in time. (A
/// transfer the device itself stalled or rejected is the client's `SMPTransferError`.)
///
/// Equality compares ``code`` only.
public struct SMPTransportError: CodedError {
    /// What went wrong. An open set.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case connectionFailed, disconnected, timeout, frameTooLarge, sendFailed, unavailable, invalidAddress
            case outcomeUnknown, connectionRefused
        }
        private let kind: Kind

        /// The link could not be opened (unknown host, no such tty, refused).
        public static let connectionFailed = Code(kind: .connectionFailed)
        /// The link went away while in use.
        public static let disconnected = Code(kind: .disconnected)
        /// No answer within the time allowed, after every retry.
        public static let timeout = Code(kind: .timeout)
        /// A frame larger than the link or the device accepts.
        public static let frameTooLarge = Code(kind: .frameTooLarge)
        /// The operating system refused to send.
        public static let sendFailed = Code(kind: .sendFailed)
        /// The transport does not exist here (e.g. Bluetooth on Linux, or switched off).
        public static let unavailable = Code(kind: .unavailable)
        /// The address could not be understood (a malformed URL, port or baud rate).
        public static let invalidAddress = Code(kind: .invalidAddress)
        /// A request that must not be sent twice (a reset, a shell command) got no answer: it may
        /// or may not have been carried out, and it was not sent again.
        public static let outcomeUnknown = Code(kind: .outcomeUnknown)
        /// Nothing listens at the address (a UDP port answered with ICMP "port unreachable").
        public static let connectionRefused = Code(kind: .connectionRefused)

        public var description: String {
            switch kind {
            case .connectionFailed: "connection failed"
            case .disconnected: "disconnected"
            case .timeout: "timed out"
            case .frameTooLarge: "frame too large"
            case .sendFailed: "send failed"
            case .unavailable: "unavailable"
            case .invalidAddress: "invalid address"
            case .outcomeUnknown: "outcome unknown"
            case .connectionRefused: "connection refused"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// Specific explanation: which endpoint, which limit, what to try.
    public var message: String
    /// For ``Code/frameTooLarge``: the size in bytes of what did not fit, when known. A field,
    /// so that callers (the CLI's "too large for the device") never read numbers out of
    /// ``message``.
    public var frameSize: Int?
    /// For ``Code/frameTooLarge``: the largest frame the link or the device takes, when known.
    public var frameLimit: Int?
    /// The underlying error, e.g. an `errno` description.
    public var cause: (any Error & Sendable)?
    /// The frame never left: the connection was closed before it was handed over. Sending it
    /// again on a new connection cannot carry out a request twice (a reset whose send failed so
    /// was never seen by the device, not one whose answer is unknown).
    public var nothingSent = false

    /// Creates an error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: a specific explanation.
    ///   - cause: the underlying error.
    public init(_ code: Code, _ message: String = "", cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    /// A ``Code/frameTooLarge`` error with its sizes as fields.
    /// - Parameters:
    ///   - size: the size in bytes of what did not fit, if known.
    ///   - limit: the most that fits, if known.
    ///   - message: a specific explanation.
    /// - Returns: the error.
    public static func frameTooLarge(size: Int?, limit: Int?, _ message: String) -> SMPTransportError {
        var error = SMPTransportError(.frameTooLarge, message)
        error.frameSize = size
        error.frameLimit = limit
        return error
    }

    /// The error for a frame that a closed connection refused: nothing was sent.
    /// - Parameter message: which connection, e.g. "the UDP socket is closed".
    /// - Returns: a ``Code/disconnected`` error with ``nothingSent`` set.
    public static func closed(_ message: String) -> SMPTransportError {
        var error = SMPTransportError(.disconnected, message)
        error.nothingSent = true
        return error
    }

    public var description: String { codedDescription() }
}
