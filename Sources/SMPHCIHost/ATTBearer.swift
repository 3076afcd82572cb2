import SMPHCI
import SMPLink

/// A connection's ATT PDUs with a timer beside them, for the one state machine that reads them
/// at a time (the GATT setup, then the link's channel; or the peripheral's server).
struct ATTBearer: Sendable {
    let connection: HCIConnection
    let inputs: TimedInputs<[UInt8]>
    /// How long a request may stay unanswered (`defaultTransactionTimeout`; tests shorten it).
    let transactionTimeout: Duration

    /// Starts forwarding the connection's PDUs; the inputs end with the connection.
    init(_ connection: HCIConnection, clock: SMPClock, transactionTimeout: Duration = Self.defaultTransactionTimeout) {
        self.connection = connection
        self.transactionTimeout = transactionTimeout
        let inputs = TimedInputs<[UInt8]>(clock: clock)
        self.inputs = inputs
        let pdus = connection.attPDUs
        Task {
            do {
                for try await pdu in pdus { inputs.deliver(.input(pdu)) }
                inputs.deliver(.ended(HCIError(.protocolViolation, "the connection ended")))
            } catch {
                inputs.deliver(.ended(error))
            }
            inputs.finish()
        }
    }

    /// ATT's transaction timeout (Core Vol 3 Part F 3.3.3): a request unanswered this long ends
    /// the bearer.
    static let defaultTransactionTimeout = Duration.seconds(30)

    /// Sends PDUs in order.
    func send(_ pdus: [[UInt8]]) async throws {
        for pdu in pdus { try await connection.sendATT(pdu) }
    }
}

extension ATTBearer {
    /// Runs the central's GATT setup (MTU, discovery of the SMP service, subscription).
    /// - Returns: the channel of the SMP characteristic.
    /// - Throws: `HCIError` from the setup (no SMP service, a refusal, 30 s without an
    ///   answer), or why the connection ended.
    func setUpClient() async throws -> GATTClientChannel {
        var setup = GATTClientSetup()
        var action = setup.start()
        var iterator = inputs.inputs.makeAsyncIterator()
        while true {
            switch action {
            case .send(let pdus, let startsRequest):
                try await send(pdus)
                if startsRequest { inputs.arm(after: transactionTimeout) }
            case .ready(let channel):
                inputs.disarm()
                return channel
            case .failed(let error):
                inputs.disarm()
                throw error
            case .none: break
            }
            guard let input = await iterator.next() else { throw CancellationError() }
            switch input {
            case .input(let pdu): action = setup.receive(pdu)
            case .timer(let generation): action = inputs.isCurrent(generation) ? setup.timedOut() : .none
            case .ended(let error): throw error
            }
        }
    }
}
