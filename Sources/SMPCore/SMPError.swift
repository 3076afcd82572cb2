import SMPBytes

/// A failure of the SMP layer itself: a malformed header, frame, payload or serial line.
///
/// Not a device refusal (that is ``SMPDeviceError``). Equality compares ``code`` only, so tests
/// can write `#expect(throws: SMPError(.badCRC))`.
public struct SMPError: CodedError {
    /// What went wrong. An open set: codes can be added without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case truncatedHeader, lengthMismatch, frameTooLarge, unexpectedOperation, unsupportedVersion
            case malformedPayload, invalidResponse, invalidRequest, encodingFailed
            case badCRC, badBase64, badFrameLength, lineTooLong, continuationWithoutStart
        }
        private let kind: Kind

        /// Fewer than 8 bytes where a header was expected.
        public static let truncatedHeader = Code(kind: .truncatedHeader)
        /// The header's length field disagrees with the bytes that follow it.
        public static let lengthMismatch = Code(kind: .lengthMismatch)
        /// A frame larger than the limit in force (the 16-bit length, a buffer, an MTU).
        public static let frameTooLarge = Code(kind: .frameTooLarge)
        /// A request where a response was expected, or the wrong response operation.
        public static let unexpectedOperation = Code(kind: .unexpectedOperation)
        /// A reserved protocol version (2 or 3) in the header.
        public static let unsupportedVersion = Code(kind: .unsupportedVersion)
        /// The payload is not one well-formed CBOR map (the cause is a `CBORError`).
        public static let malformedPayload = Code(kind: .malformedPayload)
        /// The payload is CBOR but not the expected response shape (a missing key, a wrong type,
        /// an error envelope that is neither `rc` nor `err {group, rc}`).
        public static let invalidResponse = Code(kind: .invalidResponse)
        /// The payload is CBOR but not the expected request shape.
        public static let invalidRequest = Code(kind: .invalidRequest)
        /// A value could not be encoded (e.g. a payload over 65535 bytes).
        public static let encodingFailed = Code(kind: .encodingFailed)
        /// A serial packet whose CRC-16/XMODEM does not check.
        public static let badCRC = Code(kind: .badCRC)
        /// A serial line that is not valid base64.
        public static let badBase64 = Code(kind: .badBase64)
        /// A serial packet whose length prefix is impossible (too small, or beyond the buffer).
        public static let badFrameLength = Code(kind: .badFrameLength)
        /// A serial line longer than the line limit, or a packet longer than the buffer.
        public static let lineTooLong = Code(kind: .lineTooLong)
        /// A continuation line with no packet started.
        public static let continuationWithoutStart = Code(kind: .continuationWithoutStart)

        public var description: String {
            switch kind {
            case .truncatedHeader: "truncated header"
            case .lengthMismatch: "length mismatch"
            case .frameTooLarge: "frame too large"
            case .unexpectedOperation: "unexpected operation"
            case .unsupportedVersion: "unsupported SMP version"
            case .malformedPayload: "malformed CBOR payload"
            case .invalidResponse: "invalid response"
            case .invalidRequest: "invalid request"
            case .encodingFailed: "encoding failed"
            case .badCRC: "bad CRC"
            case .badBase64: "bad base64"
            case .badFrameLength: "bad frame length"
            case .lineTooLong: "line too long"
            case .continuationWithoutStart: "continuation without start"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A specific explanation for people (what was expected, what arrived).
    public var message: String
    /// For ``Code/frameTooLarge``: the size in bytes of what did not fit, when known. A field,
    /// so that callers (the CLI's "too large for the device") never read numbers out of
    /// ``message``.
    public var frameSize: Int?
    /// For ``Code/frameTooLarge``: the largest the format can carry (the 16-bit length field), when known.
    public var frameLimit: Int?
    /// The underlying error, e.g. a `CBORError` with its byte offset or a `DecodingError`.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: a specific explanation.
    ///   - cause: the underlying error, if any.
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
    public static func frameTooLarge(size: Int?, limit: Int?, _ message: String) -> SMPError {
        var error = SMPError(.frameTooLarge, message)
        error.frameSize = size
        error.frameLimit = limit
        return error
    }

    public var description: String { codedDescription(prefix: "SMP: ") }
}
