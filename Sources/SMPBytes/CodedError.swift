/// The shape every layer's error type shares — one type per layer: `SMPError` (frames),
/// `SMPTransportError` (links), `SMPTransferError` (transfers), `MCUbootError` (images and
/// packages): an open-set code saying what went wrong, a message for people and, where there is
/// one, the underlying error.
///
/// It lives here, in the module every layer sees, so the description and the equality rule are
/// written once. Two errors are equal when their codes are: messages and causes are for people,
/// so a test can write `#expect(throws: SMPError(.badCRC))` whatever the message says.
public protocol CodedError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The type of the code: an open set of named values.
    associatedtype Code: Sendable, Hashable, CustomStringConvertible

    /// What went wrong.
    var code: Code { get }
    /// A specific explanation for people (what was expected, what arrived, what to try).
    var message: String { get }
    /// The underlying error, if any (an `errno` description, a `CBORError` with its offset).
    var cause: (any Error & Sendable)? { get }
}

extension CodedError {
    /// No underlying error.
    public var cause: (any Error & Sendable)? { nil }

    /// The description every conforming type gives: `prefix`, the code, then `: message` and
    /// ` (cause)` when there are any. (Each type declares `description` itself, so that reading
    /// it needs no import of this module.)
    /// - Parameter prefix: names the layer, e.g. `SMP: `.
    /// - Returns: the description.
    package func codedDescription(prefix: String = "") -> String {
        var text = prefix + "\(code)"
        if !message.isEmpty { text += ": \(message)" }
        if let cause { text += " (\(cause))" }
        return text
    }

    /// Equal when the codes are equal.
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.code == rhs.code }

    /// Hashes the code alone, as equality compares it alone.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
