import SMPBytes

/// A transfer that failed although the link carried every frame: the device stopped accepting
/// data, kept losing its session, or its own check of the finished upload failed. Link failures
/// during a transfer stay `SMPTransportError` (timeout, disconnected) and refusals
/// `SMPDeviceError`.
///
/// Equality compares ``code`` only.
public struct SMPTransferError: CodedError {
    /// What went wrong. An open set.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case stalled, sessionLost, deviceHashMismatch
        }
        private let kind: Kind

        /// The device answers, but its offset does not move: it accepted none of the opening chunk,
        /// or stopped accepting data at an offset, more often than the transfer tolerates
        /// (`TransferOptions.maximumRestarts`).
        public static let stalled = Code(kind: .stalled)
        /// The device kept dropping the upload session (answering offset 0 mid-transfer).
        public static let sessionLost = Code(kind: .sessionLost)
        /// The device hashed the finished upload and it does not match the SHA-256 sent with the
        /// first chunk: the data was corrupted on the way or in flash.
        public static let deviceHashMismatch = Code(kind: .deviceHashMismatch)

        public var description: String {
            switch kind {
            case .stalled: "transfer stalled"
            case .sessionLost: "upload session lost"
            case .deviceHashMismatch: "device hash check failed"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// Specific explanation: which offset, how often.
    public var message: String

    /// Creates an error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: a specific explanation.
    public init(_ code: Code, _ message: String = "") {
        self.code = code
        self.message = message
    }

    public var description: String { codedDescription() }
}
