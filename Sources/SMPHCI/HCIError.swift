import SMPBytes

/// A failure of the LE host layer: bytes from a controller that are not what the specification
/// says, a stream that lost its framing, a command the controller refused, a controller that
/// broke the protocol or did not answer in time.
///
/// Equality compares ``code`` only, so a test can write `#expect(throws: HCIError(.malformedPacket))`
/// whatever the message says.
public struct HCIError: CodedError {
    /// What went wrong. An open set.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case malformedPacket, unknownPacketIndicator, limitExceeded, malformedAdvertisingData
            case commandFailed, protocolViolation, timeout, attributeRequestFailed, missingAttribute
        }
        private let kind: Kind

        /// A packet whose lengths or fields do not add up: too short for what its header or its
        /// own counts announce, or a field outside its range.
        public static let malformedPacket = Code(kind: .malformedPacket)
        /// An H4 stream whose next byte is not a packet indicator this host knows: the stream is
        /// out of step (a wrong baud rate, a controller that printed text, a lost byte) and cannot
        /// be trusted after it.
        public static let unknownPacketIndicator = Code(kind: .unknownPacketIndicator)
        /// A packet larger than the host accepts.
        public static let limitExceeded = Code(kind: .limitExceeded)
        /// Advertising or scan response data whose AD structures overrun the data, or a structure
        /// too short for its type.
        public static let malformedAdvertisingData = Code(kind: .malformedAdvertisingData)
        /// The controller answered a command with a status other than success (``HCIError/status``).
        public static let commandFailed = Code(kind: .commandFailed)
        /// The controller sent something the protocol does not allow here: an answer to a command
        /// that was not sent, a credit for a handle that has nothing in flight.
        public static let protocolViolation = Code(kind: .protocolViolation)
        /// The controller did not answer in time.
        public static let timeout = Code(kind: .timeout)
        /// The peer's ATT server answered a request with an Error Response (``HCIError/attError``):
        /// a refused subscription, a read that needs pairing.
        public static let attributeRequestFailed = Code(kind: .attributeRequestFailed)
        /// The peer's GATT database lacks what the host needs, or has it in a form it cannot use:
        /// no SMP service, an SMP characteristic that cannot notify, no CCCD.
        public static let missingAttribute = Code(kind: .missingAttribute)

        public var description: String {
            switch kind {
            case .malformedPacket: "malformed packet"
            case .unknownPacketIndicator: "unknown packet indicator"
            case .limitExceeded: "limit exceeded"
            case .malformedAdvertisingData: "malformed advertising data"
            case .commandFailed: "command failed"
            case .protocolViolation: "protocol violation"
            case .timeout: "timed out"
            case .attributeRequestFailed: "attribute request failed"
            case .missingAttribute: "missing attribute"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// Specific explanation: which packet, which field, which length was expected and which
    /// arrived.
    public var message: String
    /// The controller's status, for ``Code/commandFailed``.
    public var status: HCIStatus?
    /// The peer's ATT error, for ``Code/attributeRequestFailed``.
    public var attError: ATTErrorCode?

    /// Creates an error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: a specific explanation.
    ///   - status: the controller's status, when it refused a command.
    ///   - attError: the peer's ATT error, when its server refused a request.
    public init(_ code: Code, _ message: String = "", status: HCIStatus? = nil, attError: ATTErrorCode? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.attError = attError
    }

    public var description: String { codedDescription(prefix: "HCI: ") }
}
