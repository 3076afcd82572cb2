/// Asks for longer link-layer packets on a new connection (LE Set Data Length, 251 octets and
/// 2120 µs by default), without depending on the answer: as a pure state machine, each input
/// returns the ``Action`` for the I/O layer; no clock, no I/O.
///
/// Controllers may refuse the command (Unknown HCI Command 0x01: Bumble's does), or leave it
/// unanswered; either way the connection works with the packets it has. So every outcome
/// finishes: the answer, a refusal, or ``timedOut()``. The negotiated sizes come later, if at
/// all, in LE Data Length Change events, which the machine reports whenever they arrive.
public struct LinkTuning: Sendable {
    /// What the I/O layer does next.
    public enum Action: Sendable, Hashable {
        /// Send this command, then deliver events; bound the wait for its answer (briefly: the
        /// connection is usable meanwhile) and call ``LinkTuning/timedOut()`` when it runs out.
        case send(HCICommandPacket)
        /// Nothing to do: deliver the next event.
        case wait
        /// The request is over, accepted or not.
        case finished(Outcome)
        /// The link layer's packet sizes on this connection changed.
        case dataLengthChanged(HCI.LEDataLengthChange)
    }

    /// How the request ended.
    public enum Outcome: Sendable, Hashable {
        /// The controller accepted it (the link layer negotiates; a Data Length Change may follow).
        case accepted
        /// The controller refused it with this status.
        case refused(HCIStatus)
        /// The controller did not answer in time.
        case unanswered

        /// Whether the controller accepted the request.
        public var isAccepted: Bool { self == .accepted }
    }

    enum State: Sendable, Hashable {
        case idle
        case requesting
        case finished(Outcome)
    }

    private(set) var state: State = .idle
    let command: HCI.LESetDataLength

    /// Creates the tuning of one connection.
    /// - Parameters:
    ///   - connectionHandle: the connection.
    ///   - txOctets: the payload octets asked for (27 to 251).
    ///   - txTime: the time asked for, in µs (328 to 17040).
    public init(
        connectionHandle: UInt16,
        txOctets: UInt16 = HCI.LESetDataLength.maximumTxOctets,
        txTime: UInt16 = HCI.LESetDataLength.maximumTxTime1M
    ) {
        command = HCI.LESetDataLength(connectionHandle: connectionHandle, txOctets: txOctets, txTime: txTime)
    }

    /// The request goes out.
    /// - Returns: the action.
    public mutating func start() -> Action {
        guard state == .idle else { return .wait }
        state = .requesting
        return .send(HCICommandPacket(command))
    }

    /// An event arrived from the controller.
    /// - Parameter event: any event.
    /// - Returns: the action.
    public mutating func receive(_ event: HCIEvent) -> Action {
        if case .leDataLengthChange(let change) = event {
            return change.connectionHandle == command.connectionHandle ? .dataLengthChanged(change) : .wait
        }
        guard state == .requesting, !answersAnotherConnection(event) else { return .wait }
        switch CommandAnswer(event, to: HCI.LESetDataLength.opcode) {
        case .notAnswer: return .wait
        case .completed: return finish(.accepted)
        case .refused(let status): return finish(.refused(status))
        // A Command Status with success is no answer this command has; it is not refused either.
        case .pending: return .wait
        }
    }

    /// The wait for the answer ran out: finished, unanswered.
    /// - Returns: the action.
    public mutating func timedOut() -> Action {
        guard state == .requesting else { return .wait }
        return finish(.unanswered)
    }

    /// Whether the event is a Command Complete for LE Set Data Length that echoes another
    /// connection's handle (another connection's tuning shares the controller). Refusals echo
    /// it too, when the controller knows the command; an answer without one may be this one's.
    private func answersAnotherConnection(_ event: HCIEvent) -> Bool {
        guard case .commandComplete(let complete) = event, complete.opcode == HCI.LESetDataLength.opcode,
            complete.returnParameters.count >= 3
        else { return false }
        let handle = UInt16(complete.returnParameters[1]) | UInt16(complete.returnParameters[2]) << 8
        return handle != command.connectionHandle
    }

    private mutating func finish(_ outcome: Outcome) -> Action {
        state = .finished(outcome)
        return .finished(outcome)
    }
}
