import Logging
import SMPHCI

extension HCIHost {
    /// How long a cancelled connection attempt may take to report its end. Bumble's controller
    /// acknowledges the cancel and never reports the attempt's end, so this wait must be bounded.
    static let cancelTimeout = Duration.seconds(2)
    /// How long LE Set Data Length may stay unanswered: the connection works without it.
    static let tuningTimeout = Duration.seconds(2)

    /// Connects to an advertiser as the central, then asks for the longest link-layer packets
    /// (going on whether the controller agrees, refuses or says nothing).
    /// - Parameters:
    ///   - peer: the advertiser's address.
    ///   - type: its address type, as its advertisements gave it.
    ///   - timeout: how long the peer may take to answer.
    /// - Returns: the connection, owned by the caller.
    /// - Throws: `HCIError` (`.timeout` when the peer did not answer, `.commandFailed` when
    ///   the controller refused), the reason the controller went away, or `CancellationError`.
    public func connect(to peer: BluetoothAddress, type: LEAddressType, timeout: Duration) async throws -> HCIConnection
    {
        let procedure = try await beginProcedure()
        defer { endProcedure(procedure) }
        var iterator = procedure.inputs.makeAsyncIterator()
        var machine = LEConnector(peer: peer, peerType: type, controller: controller)
        var action = machine.start()
        var cancelling = false
        while true {
            switch action {
            case .send(let command):
                send(command)
                procedure.arm(after: cancelling ? Self.cancelTimeout : timeout)
            case .connected(let connection):
                try await tune(connection.handle, procedure)
                return try claimConnection(connection.handle)
            case .failed(let error): throw error
            case .wait: break
            }
            switch await iterator.next() {
            case .input(let event): action = machine.receive(event)
            case .timer(let generation) where procedure.isCurrent(generation):
                cancelling = true
                action = machine.timedOut()
            case .timer: action = .wait
            case .ended(let error): throw error
            case nil:
                // Cancelled: an attempt left running would connect later, unowned.
                if !cancelling { send(HCICommandPacket(HCI.LECreateConnectionCancel())) }
                throw CancellationError()
            }
        }
    }

    /// LE Set Data Length on a new connection: longer link-layer packets make an upload faster,
    /// but a controller may refuse or ignore the request, and either way the connection is used.
    private func tune(_ handle: UInt16, _ procedure: HCIProcedure) async throws {
        // The connect loop's iterator is idle meanwhile: one reader at a time.
        var iterator = procedure.inputs.makeAsyncIterator()
        var tuning = LinkTuning(connectionHandle: handle)
        var action = tuning.start()
        while true {
            switch action {
            case .send(let command):
                send(command)
                procedure.arm(after: Self.tuningTimeout)
            case .finished(let outcome):
                logger.debug("data length", metadata: ["handle": "\(handle)", "outcome": "\(outcome)"])
                return
            case .wait, .dataLengthChanged: break
            }
            switch await iterator.next() {
            case .input(let event): action = tuning.receive(event)
            case .timer(let generation) where procedure.isCurrent(generation): action = tuning.timedOut()
            case .timer: action = .wait
            case .ended(let error): throw error
            case nil: throw CancellationError()
            }
        }
    }
}
