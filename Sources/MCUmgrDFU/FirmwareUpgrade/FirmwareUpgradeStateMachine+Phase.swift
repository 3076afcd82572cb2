import MCUboot
import MCUmgr
import SMPCore

// Where the machine is, each state with only the data valid in it. What holds for the whole run
// (the configuration, the device's facts, the lists read, the warnings, the action in flight, the
// retry budget) stays in the machine's stored properties; what only some states have is carried
// by those states, so it cannot be read, or left behind, anywhere else.
extension FirmwareUpgradeStateMachine {
    /// What the device reported about itself: read in the first contact (the slot sizes before
    /// the first upload), held for the whole run.
    package struct DeviceFacts: Sendable, Hashable {
        /// The bootloader's name (`nil`: not reported).
        package var bootloaderName: String?
        /// The bootloader's mode (`nil`: not reported); DirectXIP once a device that reported
        /// none refuses to mark an image.
        package var bootloaderMode: OSManagement.MCUbootMode?
        /// The bootloader refuses downgrades.
        package var noDowngrade = false
        /// The slot sizes (empty when the device has no slot information); `nil` until read,
        /// once, before the first upload.
        package var slotCapacities: [ImageManagement.SlotInfo.Image]?
    }

    /// A plan being carried out, and what only the step in progress has.
    package struct Execution: Sendable, Hashable {
        /// The plan.
        package let plan: FirmwareUpgradePlan
        /// The step in progress: always one of the plan's (see `first(of:)` and `next`).
        package let stepIndex: Int
        /// The reboot a reset of this step started: from the reset (or, when a reset is sent
        /// again, from the one before it) through waiting for the reboot and the swap,
        /// reconnecting and verifying, until the next step. It outlives those states on purpose:
        /// the verdict on the list read after a reset depends on whether the device was seen
        /// going away and how many resets were sent.
        package internal(set) var reboot: Reboot?
        /// SUIT: when installation began (the install deadline runs from it, across reconnections).
        package internal(set) var installStart: Duration?

        /// The first step of `plan`, or `nil` when it has none.
        static func first(of plan: FirmwareUpgradePlan) -> Execution? {
            plan.steps.isEmpty ? nil : Execution(plan: plan, stepIndex: 0)
        }

        /// The step after this one, with nothing carried over, or `nil` after the last.
        var next: Execution? {
            stepIndex + 1 < plan.steps.count ? Execution(plan: plan, stepIndex: stepIndex + 1) : nil
        }

        /// The last reset of the plan up to this step (a revert, a reset, a reset into the
        /// bootloader), with nothing carried over; `nil` when there is none.
        var reset: Execution? {
            let index = plan.steps[...stepIndex].lastIndex {
                if case .revert = $0 { true } else { $0 == .reset || $0 == .enterBootloader }
            }
            return index.map { Execution(plan: plan, stepIndex: $0) }
        }

        /// The same plan and step without the step's own data: what planning again keeps (for
        /// what a failure while planning names).
        var replaced: Execution { Execution(plan: plan, stepIndex: stepIndex) }

        /// The step in progress.
        package var step: FirmwareUpgradePlan.Step { plan.steps[stepIndex] }

        /// The state the step is performed in.
        package var state: FirmwareUpgrade.State {
            switch step {
            case .upload, .suitUploadEnvelope, .suitUploadCache: .uploading
            case .eraseAppSettings: .erasingAppSettings
            case .test: .testing
            case .confirm: .confirming
            case .reset, .revert: .resetting
            case .enterBootloader: .enteringBootloader
            case .verify: .verifying
            case .suitProcess, .suitInstall: .installing
            }
        }
    }

    /// How a run ended.
    package enum Ending: Sendable, Hashable {
        /// The plan is done and verified.
        case succeeded
        /// Stopped with an error.
        case failed
        /// Cancelled by the caller.
        case cancelled
    }

    /// The machine's state with its data. The public ``FirmwareUpgrade/State`` is computed from it
    /// (``FirmwareUpgradeStateMachine/state``).
    package enum Phase: Sendable, Hashable {
        /// Not started.
        case idle
        /// Connecting and reading the parameters: the first contact.
        case requestingParameters
        /// Reading the bootloader's name, then its mode.
        case readingBootloaderInfo
        /// Reading the image list (and the slot sizes) and planning; `replacing` is the plan
        /// being made again and its step, `nil` for the first plan.
        case planning(replacing: Execution?)
        /// Performing a step of the plan (uploading through installing: the step decides).
        case executing(Execution)
        /// Watching the device go away after a reset (the execution holds the reboot).
        case waitingForReboot(Execution)
        /// Waiting for the swap before reconnecting (the execution holds the reboot).
        case waitingForSwap(Execution)
        /// Reconnecting; what follows carries the state to return to.
        case reconnecting(Reconnection)
        /// Paused in the state it holds; resuming returns to it as it was.
        indirect case paused(Phase)
        /// Finished.
        case ended(Ending)

        /// The state the phase is in, a pause set aside.
        var active: Phase {
            if case .paused(let phase) = self { phase.active } else { self }
        }

        /// What callers see.
        var state: FirmwareUpgrade.State {
            switch self {
            case .idle: .idle
            case .requestingParameters: .requestingParameters
            case .readingBootloaderInfo: .readingBootloaderInfo
            case .planning: .validating
            case .executing(let execution): execution.state
            case .waitingForReboot: .waitingForReboot
            case .waitingForSwap: .waitingForSwap
            case .reconnecting: .reconnecting
            case .paused(let phase): phase.state
            case .ended(.succeeded): .succeeded
            case .ended(.failed): .failed
            case .ended(.cancelled): .cancelled
            }
        }

        /// The plan and step the phase holds, if any (a plan being replaced while planning).
        var execution: Execution? {
            switch self {
            case .planning(let replacing): replacing
            case .executing(let execution), .waitingForReboot(let execution), .waitingForSwap(let execution):
                execution
            case .reconnecting(let reconnection): reconnection.then.execution
            case .paused(let phase): phase.execution
            case .idle, .requestingParameters, .readingBootloaderInfo, .ended: nil
            }
        }
    }

    // MARK: - What the driver, the event emitter and the tests read

    /// Where the upgrade is.
    package var state: FirmwareUpgrade.State { phase.state }

    /// The step in progress, if any.
    package var currentStep: FirmwareUpgradePlan.Step? { phase.execution?.step }

    /// Whether the upgrade ended.
    package var isFinished: Bool {
        if case .ended = phase { true } else { false }
    }

    /// Whether the caller paused.
    package var isPaused: Bool {
        if case .paused = phase { true } else { false }
    }

    /// The bootloader mode the device reported.
    package var bootloaderMode: OSManagement.MCUbootMode? { device.bootloaderMode }
}
