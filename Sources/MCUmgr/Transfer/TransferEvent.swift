/// What a chunked transfer reports while it runs, in order.
public enum TransferEvent: Sendable, Hashable {
    /// The device confirmed more bytes (the first one answers the session-opening chunk).
    case progress(TransferProgress)
    /// The device already held the first `offset` bytes of an interrupted upload of the same data
    /// and continues from there.
    case resumed(offset: Int)
    /// The number of requests kept in flight changed, and why.
    case windowChanged(WindowChange)
    /// The device lost the upload session (it answered offset 0 mid-transfer, or stopped
    /// advancing); the transfer opens it again from the device's offset.
    case restarted(reason: String)
}

/// A change of the transfer window.
public struct WindowChange: Sendable, Hashable, CustomStringConvertible {
    /// Why the window changed.
    public enum Reason: Sendable, Hashable, CustomStringConvertible {
        /// The device answered `ENOMEM`: every buffer of its pool was held.
        case deviceOutOfBuffers
        /// The device answered `EBUSY`.
        case deviceBusy
        /// A chunk got no answer within the timeout (lost on the way, or dropped by a device
        /// whose buffers were all held).
        case noAnswer
        /// Answers flow again.
        case answersFlowing

        public var description: String {
            switch self {
            case .deviceOutOfBuffers: "the device ran out of buffers (ENOMEM)"
            case .deviceBusy: "the device was busy (EBUSY)"
            case .noAnswer: "a chunk got no answer"
            case .answersFlowing: "answers flow again"
            }
        }
    }

    /// Requests in flight before.
    public var from: Int
    /// Requests in flight now.
    public var to: Int
    /// Why.
    public var reason: Reason

    /// Creates a change.
    /// - Parameters:
    ///   - from: the old window.
    ///   - to: the new window.
    ///   - reason: why it changed.
    public init(from: Int, to: Int, reason: Reason) {
        self.from = from
        self.to = to
        self.reason = reason
    }

    public var description: String { "window \(from) → \(to): \(reason)" }
}
