import SMPHCI

extension HCIHost {
    /// Advertises as a connectable peripheral until a central connects.
    /// - Parameters:
    ///   - name: the device name (in the advertising data when it fits, in the scan response).
    ///   - service: the service UUID advertised.
    /// - Returns: the connection, owned by the caller. Advertising has stopped (legacy advertising
    ///   ends with a connection); call again to advertise for the next central.
    /// - Throws: `HCIError` (a name that cannot be advertised, a refused or unanswered command),
    ///   the reason the controller went away, or `CancellationError` (advertising is then
    ///   switched off).
    public func advertise(name: String, service: BluetoothUUID) async throws -> HCIConnection {
        let procedure = try await beginProcedure()
        defer { endProcedure(procedure) }
        var iterator = procedure.inputs.makeAsyncIterator()
        var machine = try LEAdvertiser(name: name, service: service, controller: controller)
        var action = machine.start()
        var enable = EnableTracker()
        while true {
            switch action {
            case .send(let command):
                send(command)
                enable.sent(command)
                procedure.arm(after: commandTimeout)
            case .advertising: procedure.disarm()
            case .connected(let connection): return try claimConnection(connection.handle)
            case .failed(let error): throw error
            case .stopped: throw CancellationError()
            case .wait: break
            }
            switch await iterator.next() {
            case .input(let event): action = machine.receive(event)
            case .timer(let generation) where procedure.isCurrent(generation): action = machine.timedOut()
            case .timer: action = .wait
            case .ended(let error): throw error
            case nil:
                // Cancelled: a controller left advertising would accept a central nobody serves
                // (also when the enable is still in flight).
                if let undo = enable.undo { send(undo) }
                throw CancellationError()
            }
        }
    }
}
