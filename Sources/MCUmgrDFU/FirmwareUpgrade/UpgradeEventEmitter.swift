import Logging

/// Turns the machine's record (states visited, plan, warnings) into events, each once.
struct UpgradeEventEmitter {
    let continuation: AsyncThrowingStream<FirmwareUpgrade.Event, any Error>.Continuation
    let logger: Logger
    private var shownStates = 0
    private var shownWarnings = 0
    private var shownPlan: FirmwareUpgradePlan?
    private var shownReconnect: FirmwareUpgrade.Reconnecting?
    private var shownInitialSlots = false

    init(continuation: AsyncThrowingStream<FirmwareUpgrade.Event, any Error>.Continuation, logger: Logger) {
        self.continuation = continuation
        self.logger = logger
    }

    /// Emits what changed since the last call: states, a new plan, new warnings.
    /// - Parameter machine: the machine after its latest input.
    ///
    /// A new plan comes before the state its first step enters (planning and entering that state
    /// are one transition), so that a reader sees the plan, then `uploading`.
    mutating func report(_ machine: FirmwareUpgradeStateMachine) {
        let newPlan = machine.plan.flatMap { $0 == shownPlan ? nil : $0 }
        let held = newPlan != nil && machine.visited.count > shownStates ? 1 : 0
        showStates(machine, upTo: machine.visited.count - held)
        if !shownInitialSlots, let slots = machine.initialSlots {
            shownInitialSlots = true
            continuation.yield(.imagesRead(slots))
        }
        for warning in machine.warnings.dropFirst(shownWarnings) { continuation.yield(.warning(warning)) }
        shownWarnings = machine.warnings.count
        if let newPlan {
            shownPlan = newPlan
            continuation.yield(.planned(newPlan))
        }
        showStates(machine, upTo: machine.visited.count)
        if let attempt = machine.reconnecting, attempt.attempt != shownReconnect?.attempt {
            continuation.yield(.reconnecting(attempt))
        }
        shownReconnect = machine.reconnecting
    }

    private mutating func showStates(_ machine: FirmwareUpgradeStateMachine, upTo end: Int) {
        guard end > shownStates else { return }
        for index in shownStates..<end {
            let state = machine.visited[index]
            let from = index == 0 ? FirmwareUpgrade.State.idle : machine.visited[index - 1]
            continuation.yield(.stateChanged(from: from, to: state))
            // Trace, not debug: `-v` already shows each state once, as the progress view draws it.
            logger.trace("upgrade state", metadata: ["from": "\(from)", "to": "\(state)"])
        }
        shownStates = end
    }

    /// The summary of a finished upgrade.
    /// - Parameters:
    ///   - machine: the machine at the end.
    ///   - uploadedBytes: bytes this run uploaded.
    ///   - duration: time since the start.
    func summary(_ machine: FirmwareUpgradeStateMachine, uploadedBytes: Int, at duration: Duration)
        -> FirmwareUpgrade.Summary
    {
        FirmwareUpgrade.Summary(
            plan: machine.plan,
            before: machine.initialSlots ?? [],
            after: machine.lastSlots,
            bootloaderName: machine.device.bootloaderName,
            bootloaderMode: machine.bootloaderMode,
            uploadedBytes: uploadedBytes,
            duration: duration,
            isUpToDate: (machine.plan?.isUpToDate ?? false) && machine.resetsBeforeUpload == 0,
            reverted: machine.resetsBeforeUpload > 0
        )
    }
}
