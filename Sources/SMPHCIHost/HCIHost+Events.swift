import Logging
import SMPHCI

extension HCIHost {
    /// Reads the controller's packets for as long as the link lasts.
    func startPump() {
        let inputs = link.inputs
        Task { [weak self] in
            for await input in inputs {
                guard let self else { return }
                await self.handle(input)
            }
        }
    }

    func handle(_ input: H4Link.Input) {
        switch input {
        case .packet(.event(let packet)):
            do {
                handle(try HCIEvent(packet))
            } catch {
                // A malformed event cannot be trusted, but it is one event: say so and go on.
                logger.warning("ignored a malformed event from the controller", metadata: ["error": "\(error)"])
            }
        case .packet(.acl(let packet)): receiveACL(packet)
        case .packet, .idle: break
        case .ended(let error):
            controllerEnded(error ?? HCIError(.protocolViolation, "the controller connection was closed"))
        }
    }

    private func handle(_ event: HCIEvent) {
        switch event {
        case .commandComplete(let complete): creditsArrived(complete.numHCICommandPackets)
        case .commandStatus(let status): creditsArrived(status.numHCICommandPackets)
        case .numberOfCompletedPackets(let completed): sendACL(flow.completed(completed))
        case .disconnectionComplete(let complete): connectionEnded(complete.connectionHandle, reason: complete.reason)
        case .leConnectionComplete(let complete) where complete.status.isSuccess:
            connectionOpened(handle: complete.connectionHandle, role: complete.role, peer: complete.peerAddress)
        case .leEnhancedConnectionComplete(let complete) where complete.status.isSuccess:
            connectionOpened(handle: complete.connectionHandle, role: complete.role, peer: complete.peerAddress)
        default: break
        }
        procedure?.deliver(.input(event))
    }

    // MARK: Commands

    /// Sends a command now, or when the controller next grants a credit.
    /// - Parameter command: the command.
    func send(_ command: HCICommandPacket) {
        unsentCommands.append(command)
        flushCommands()
    }

    private func creditsArrived(_ count: UInt8) {
        credits.update(numHCICommandPackets: count)
        flushCommands()
    }

    private func flushCommands() {
        while !unsentCommands.isEmpty, endReason == nil, credits.take() {
            let command = unsentCommands.removeFirst()
            do {
                try link.send(.command(command))
            } catch {
                controllerEnded(error)
                return
            }
        }
    }

    // MARK: Procedures

    /// Waits for the procedure running to end, then makes a new one current: it receives every
    /// event from now on until `endProcedure(_:)`.
    /// - Returns: the new procedure's inputs.
    /// - Throws: the reason the controller is gone.
    func beginProcedure() async throws -> HCIProcedure {
        while procedure != nil {
            await withCheckedContinuation { procedureWaiters.append($0) }
        }
        if let endReason { throw endReason }
        let next = HCIProcedure(clock: clock)
        procedure = next
        return next
    }

    /// Ends a procedure and lets the next one run.
    /// - Parameter ended: the procedure from `beginProcedure()`.
    func endProcedure(_ ended: HCIProcedure) {
        guard procedure === ended else { return }
        ended.finish()
        procedure = nil
        if !procedureWaiters.isEmpty { procedureWaiters.removeFirst().resume() }
    }

    /// The controller is gone: every connection and the running procedure learn why.
    func controllerEnded(_ error: any Error) {
        guard endReason == nil else { return }
        endReason = error
        link.close()
        logger.debug("controller gone", metadata: ["controller": "\(address)", "error": "\(error)"])
        procedure?.deliver(.ended(error))
        for handle in connections.keys { connectionEnded(handle, cause: error) }
        let waiters = procedureWaiters
        procedureWaiters = []
        for waiter in waiters { waiter.resume() }
    }
}
