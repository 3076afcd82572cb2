import SMPHCI

extension HCIHost {
    /// Scans (actively, so that names in scan responses are seen) for a while, or until `stopWhen`
    /// accepts an advertiser.
    /// - Parameters:
    ///   - duration: how long to scan at most.
    ///   - stopWhen: called for every advertiser first seen or changed; `true` ends the scan early.
    /// - Returns: every advertiser seen.
    /// - Throws: `HCIError` when the controller refuses or does not answer, the reason the
    ///   controller went away, or `CancellationError`.
    public func scan(
        for duration: Duration,
        stopWhen: @Sendable (DiscoveredPeripheral) -> Bool = { _ in false }
    ) async throws -> [DiscoveredPeripheral] {
        let procedure = try await beginProcedure()
        defer { endProcedure(procedure) }
        var machine = LEScanner(controller: controller)
        var action = machine.start()
        var iterator = procedure.inputs.makeAsyncIterator()
        var scanning = false
        var enable = EnableTracker()
        while true {
            switch action {
            case .send(let command):
                send(command)
                enable.sent(command)
                procedure.arm(after: commandTimeout)
            case .scanning:
                scanning = true
                procedure.arm(after: duration)
            case .discovered(let peripherals):
                if peripherals.contains(where: stopWhen) {
                    scanning = false
                    action = machine.stop()
                    continue
                }
            case .stopped: return machine.discovered
            case .failed(let error): throw error
            case .wait: break
            }
            guard let input = await iterator.next() else {
                // Cancelled: leave the controller as it was found, not scanning (also when the
                // enable is still in flight).
                if let undo = enable.undo { send(undo) }
                throw CancellationError()
            }
            switch input {
            case .input(let event): action = machine.receive(event)
            case .timer(let generation) where procedure.isCurrent(generation):
                action = scanning ? machine.stop() : machine.timedOut()
                scanning = false
            case .timer: action = .wait
            case .ended(let error): throw error
            }
        }
    }
}
