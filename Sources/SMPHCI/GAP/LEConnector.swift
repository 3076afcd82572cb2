/// Connects to one advertiser in the central role, as a pure state machine in the SwiftNIO
/// style: each input returns the ``Action`` for the I/O layer; no clock, no I/O.
///
/// The sequence: LE Create Connection (answered by a Command Status) → LE Connection Complete or
/// LE Enhanced Connection Complete in the central role → ``Action/connected(_:)``. The wait for
/// the peer has no end of its own: the I/O layer bounds it and calls ``timedOut()``, which sends
/// LE Create Connection Cancel; the controller then reports the connection as failed with status
/// 0x02 (unknown connection identifier) → ``Action/failed(_:)`` `.timeout`. A successful
/// connection that races the cancel wins: a real connection is never lost (the caller may
/// disconnect it). Bumble's controller acknowledges the cancel and never sends the 0x02
/// completion, so the I/O layer bounds the cancel too and calls ``timedOut()`` again.
///
/// Events that are not the machine's are ignored: answers to other commands, connections in the
/// peripheral role, connections to another peer.
public struct LEConnector: Sendable {
    /// What the I/O layer does next.
    public enum Action: Sendable, Hashable {
        /// Send this command, then deliver events; call ``LEConnector/timedOut()`` when the
        /// connect timeout (or, after a cancel, the wait for its outcome) runs out.
        case send(HCICommandPacket)
        /// Nothing to do: deliver the next event.
        case wait
        /// Connected.
        case connected(LEConnection)
        /// No connection: refused, failed, or timed out.
        case failed(HCIError)
    }

    /// The connection parameters asked for.
    public struct Parameters: Sendable, Hashable {
        /// LE_Scan_Interval while looking for the peer, in units of 0.625 ms.
        public var scanInterval: UInt16
        /// LE_Scan_Window, in units of 0.625 ms; at most the interval.
        public var scanWindow: UInt16
        /// Connection_Interval_Min, in units of 1.25 ms.
        public var intervalMin: UInt16
        /// Connection_Interval_Max, in units of 1.25 ms.
        public var intervalMax: UInt16
        /// Max_Latency, in connection events.
        public var latency: UInt16
        /// Supervision_Timeout, in units of 10 ms.
        public var supervisionTimeout: UInt16

        /// Creates parameters; the defaults are a 30–50 ms interval, no latency, a 4 s supervision
        /// timeout, and a 60 ms scan interval with a 30 ms window.
        public init(
            scanInterval: UInt16 = 0x0060,
            scanWindow: UInt16 = 0x0030,
            intervalMin: UInt16 = 24,
            intervalMax: UInt16 = 40,
            latency: UInt16 = 0,
            supervisionTimeout: UInt16 = 400
        ) {
            self.scanInterval = scanInterval
            self.scanWindow = scanWindow
            self.intervalMin = intervalMin
            self.intervalMax = intervalMax
            self.latency = latency
            self.supervisionTimeout = supervisionTimeout
        }
    }

    enum State: Sendable {
        case idle
        /// LE Create Connection sent; its Command Status not yet seen.
        case creating
        /// The controller looks for the peer.
        case connecting
        /// LE Create Connection Cancel sent after the connect timeout.
        case cancelling
        case connected(LEConnection)
        case failed(HCIError)
    }

    private(set) var state: State = .idle
    let peer: PeerKey
    let ownAddressType: LEAddressType
    let parameters: Parameters

    /// Creates the connection of one peer.
    /// - Parameters:
    ///   - peer: the peer's address.
    ///   - peerType: its address type, as its advertisements reported it.
    ///   - controller: what the bring-up learnt; the own address type is random when a random
    ///     address was set, else public.
    ///   - parameters: the connection parameters.
    public init(
        peer: BluetoothAddress,
        peerType: LEAddressType,
        controller: ControllerInfo,
        parameters: Parameters = Parameters()
    ) {
        self.peer = PeerKey(address: peer, type: peerType)
        self.ownAddressType = controller.randomAddress == nil ? .publicDevice : .randomDevice
        self.parameters = parameters
    }

    /// Connecting starts: LE Create Connection. A connector connects once: for another attempt,
    /// make a new one.
    /// - Returns: the action.
    public mutating func start() -> Action {
        guard case .idle = state else { return .wait }
        state = .creating
        return .send(createCommand)
    }

    /// An event arrived from the controller.
    /// - Parameter event: any event.
    /// - Returns: the action.
    public mutating func receive(_ event: HCIEvent) -> Action {
        switch state {
        case .idle, .connected, .failed:
            return .wait
        case .creating, .connecting, .cancelling:
            if let completion = ConnectionCompletion(event) { return completed(completion) }
            return answered(event)
        }
    }

    /// The connect timeout ran out (or, after the cancel, the wait for its outcome).
    /// - Returns: the cancel, or the failure.
    public mutating func timedOut() -> Action {
        switch state {
        case .creating, .connecting:
            state = .cancelling
            return .send(HCICommandPacket(HCI.LECreateConnectionCancel()))
        case .cancelling:
            return fail(noConnection)
        case .idle, .connected, .failed:
            return .wait
        }
    }

    private mutating func answered(_ event: HCIEvent) -> Action {
        guard case .creating = state else {
            // The cancel's own answer changes nothing: success means the 0x02 completion
            // follows, Command Disallowed that the connection completed first, and that
            // completion is on its way too.
            return .wait
        }
        switch CommandAnswer(event, to: .leCreateConnection) {
        case .notAnswer: return .wait
        case .pending:
            state = .connecting
            return .wait
        case .refused(let status): return fail(.refused("LE Create Connection", status))
        case .completed:
            return fail(HCIError(.protocolViolation, "a Command Complete with success for LE Create Connection"))
        }
    }

    private mutating func completed(_ completion: ConnectionCompletion) -> Action {
        guard completion.connection.role == .central else { return .wait }
        guard completion.status.isSuccess else {
            // Before this command's Command Status, a failure is an earlier attempt's (a late
            // 0x02 after an earlier cancel): the controller reports an outcome after its status.
            if case .creating = state { return .wait }
            // A failed completion names no peer (Bumble and others send zeros), and the
            // controller has one LE Create Connection pending at most: it is this one's.
            if completion.status == .unknownConnectionIdentifier, case .cancelling = state {
                return fail(noConnection)
            }
            return fail(
                HCIError(
                    .commandFailed,
                    "no connection to \(peerText): \(completion.status)",
                    status: completion.status
                )
            )
        }
        guard isPeer(completion.connection) else { return .wait }
        state = .connected(completion.connection)
        return .connected(completion.connection)
    }

    /// Whether a connection is to this machine's peer; a resolved identity type (0x02, 0x03)
    /// matches its plain type (0x00, 0x01).
    private func isPeer(_ connection: LEConnection) -> Bool {
        connection.peerAddress == peer.address
            && connection.peerAddressType.rawValue & 0x01 == peer.type.rawValue & 0x01
    }

    private var peerText: String { "\(peer.address) (\(peer.type))" }

    private var noConnection: HCIError {
        HCIError(.timeout, "no connection to \(peerText) within the connect timeout")
    }

    private mutating func fail(_ error: HCIError) -> Action {
        state = .failed(error)
        return .failed(error)
    }

    private var createCommand: HCICommandPacket {
        HCICommandPacket(
            HCI.LECreateConnection(
                scanInterval: parameters.scanInterval,
                scanWindow: min(parameters.scanWindow, parameters.scanInterval),
                peerAddressType: peer.type,
                peerAddress: peer.address,
                ownAddressType: ownAddressType,
                connectionIntervalMin: parameters.intervalMin,
                connectionIntervalMax: max(parameters.intervalMax, parameters.intervalMin),
                maxLatency: parameters.latency,
                supervisionTimeout: parameters.supervisionTimeout
            )
        )
    }
}
