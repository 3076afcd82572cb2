import Foundation
import MCUboot
import MCUmgr
import SMPCore

/// Every decision of an upgrade, as a value: feed it what happened (``Input``) and the time since
/// the run started, it answers what to do next (``Action``). No I/O and no clock of its own; the
/// driver performs each action and feeds the outcome back, and table tests drive it directly.
///
/// Policies it holds:
/// - the first contact decides reachability: no answer to the parameters request fails the run
///   at once (a silent device is unreachable, not small); bootloader info that does not come is
///   a warning and an unknown mode;
/// - a step that failed on the link is retried after a reconnection, up to
///   ``FirmwareUpgrade/Configuration/retries`` times per step — only steps that are safe to
///   repeat (an upload resumes by `sha`, a state write is idempotent); a settings erase whose
///   answer was lost is reported as unknown and not repeated;
/// - a reset is sent once. After it the device must go away (probes go unanswered, the link
///   drops) and come back; then the image list is the truth. An image still pending after a
///   reboot means the bootloader did not swap: the run stops and says why, it does not reset
///   again — unless the reset's answer was lost, when the device going away may have been the
///   link dropping first: then one more reset. A reset whose answer was lost on a device that
///   never went away is sent again. A reset refused as busy is sent again with `force`;
/// - a device that did not report its bootloader mode and refuses test or confirm as unsupported
///   is planned again as DirectXIP without revert (upload, reset);
/// - a slot held by another image marked for boot is freed by resetting, then planned again
///   (at most three times);
/// - pause holds the next action until resume; cancel ends in every state.
///
/// Each state carries only the data valid in it (``Phase``, in `+Phase.swift`): a step's plan
/// and index, the reboot its reset started, a SUIT install's start, a reconnection's way back, the
/// state a pause holds. What holds for the whole run is stored beside it.
package struct FirmwareUpgradeStateMachine: Sendable {
    /// What the driver does next.
    package enum Action: Sendable, Hashable {
        /// Open a new connection (closing any other); report ``Input/connected``.
        case connect
        /// Read the MCUmgr parameters (OS 6); report ``Input/parametersRead``.
        case readParameters
        /// Read bootloader info (OS 8) with this query (`nil`: the name; `"mode"`); report
        /// ``Input/bootloaderName(_:)`` or ``Input/bootloaderMode(_:noDowngrade:)``.
        case readBootloaderInfo(query: String?)
        /// Read the image list (image 0 read); report ``Input/imageList(_:)``.
        case readImageList
        /// Read the slot sizes (image 6), before the first upload; report ``Input/slotInfo(_:)``,
        /// or a refusal from a device without the command.
        case readSlotInfo
        /// Upload an MCUboot image; report ``Input/done``.
        case upload(imageIndex: Int, packageIndex: Int)
        /// Upload part of a SUIT package; report ``Input/done``.
        case uploadSUIT(SUITUpload)
        /// Erase the application settings (Zephyr basic 0); report ``Input/done``.
        case eraseAppSettings
        /// Write an image's state (image 0 write): test, or confirm; report ``Input/stateWritten(_:)``.
        case writeImageState(hash: [UInt8], confirm: Bool)
        /// Send `os reset` once, never again automatically (with `boot_mode` to stop in the
        /// bootloader); report ``Input/done``, or ``Input/outcomeUnknown(_:)`` when its answer is
        /// lost.
        case reset(force: Bool, bootMode: UInt8? = nil)
        /// Send an echo with the probe timeout and no retry; report ``Input/probeAnswered`` or
        /// ``Input/probeUnanswered``.
        case probe
        /// SUIT: start processing the deferred envelope; report ``Input/done``.
        case processSUITEnvelope
        /// SUIT: ask whether the device wants a resource; report ``Input/suitRequested(resource:session:)``
        /// or ``Input/suitNothingRequested``.
        case pollSUIT
        /// SUIT: read the digests of the installed manifests; report ``Input/suitManifests(_:)``.
        case readSUITManifests
        /// Wait (the connection stays as it is); report ``Input/waited``.
        case wait(Duration)
        /// Hold until the caller resumes; then report ``Input/resume``.
        case waitForResume
        /// The plan is done and verified.
        case succeed
        /// Stop with this error.
        case fail(FirmwareUpgradeError)
    }

    /// A SUIT upload.
    package enum SUITUpload: Sendable, Hashable {
        /// The envelope (SUIT 2).
        case envelope(packageIndex: Int, deferInstall: Bool)
        /// A cache image (SUIT 5).
        case cache(packageIndex: Int)
        /// A resource the device asked for (SUIT 4) in a session.
        case resource(name: String, session: UInt32)
    }

    /// What happened.
    package enum Input: Sendable {
        /// Begin.
        case start
        /// A connection is open.
        case connected
        /// The parameters request was answered (with parameters, or refused).
        case parametersRead
        /// The bootloader's name, or `nil` when the device has no bootloader info.
        case bootloaderName(String?)
        /// The bootloader's mode and whether it refuses downgrades.
        case bootloaderMode(OSManagement.MCUbootMode?, noDowngrade: Bool)
        /// The image list.
        case imageList([ImageManagement.SlotState])
        /// The slot sizes, per image.
        case slotInfo([ImageManagement.SlotInfo.Image])
        /// The list a state write was answered with.
        case stateWritten([ImageManagement.SlotState])
        /// The action finished.
        case done
        /// A request that must not be sent twice got no answer: it may or may not have happened.
        case outcomeUnknown(any Error & Sendable)
        /// The device's own hash check rejected what the upload wrote (`match: false`).
        case uploadCorrupted(any Error & Sendable)
        /// The probe was answered.
        case probeAnswered
        /// The probe got no answer, or the link dropped.
        case probeUnanswered
        /// SUIT: the device asks for a resource.
        case suitRequested(resource: String, session: UInt32)
        /// SUIT: the device asks for nothing.
        case suitNothingRequested
        /// SUIT: the digests of the installed manifests.
        case suitManifests([[UInt8]])
        /// The wait is over.
        case waited
        /// The link failed (timeout, disconnect, refused) while performing the last action.
        case linkFailed(any Error & Sendable)
        /// The device refused the last action.
        case deviceRefused(SMPDeviceError)
        /// Anything else that stops the upgrade.
        case failed(FirmwareUpgradeError.Code, String)
        /// The caller paused (reported between actions, or after stopping an upload).
        case pause
        /// The caller resumed.
        case resume
        /// The caller cancelled.
        case cancel
    }

    /// The configuration in force.
    package let configuration: FirmwareUpgrade.Configuration
    /// What is installed.
    package let payload: UpgradePayload

    /// The state with its own data (`+Phase.swift`); ``state`` is computed from it.
    package internal(set) var phase: Phase = .idle {
        didSet {
            let entered = phase.state
            if entered != oldValue.state { visited.append(entered) }
        }
    }

    // What holds across the whole run, whatever the state.

    /// Every state entered, in order (one input may pass through several, e.g. verifying on its
    /// way to confirming); the driver shows each once.
    package private(set) var visited: [FirmwareUpgrade.State] = []
    /// The latest plan made, for the events and the summary (the plan being carried out is the
    /// current state's).
    package private(set) var plan: FirmwareUpgradePlan?
    /// What the device reported about itself.
    package internal(set) var device = DeviceFacts()
    /// The first image list read, for the summary.
    package internal(set) var initialSlots: [ImageManagement.SlotState]?
    /// The last image list read or answered.
    package internal(set) var lastSlots: [ImageManagement.SlotState] = []
    /// Things worth telling a person, in order; the driver shows each once.
    package internal(set) var warnings: [String] = []
    /// Resets sent to free a slot before the upload (a revert), at most three.
    package private(set) var resetsBeforeUpload = 0
    /// Uploads (by position in the payload) the device's hash check rejected.
    var corrupted: Set<Int> = []
    /// The action handed out last: the one in flight, in every state (one request at a time),
    /// re-issued after a pause or a reconnection.
    var lastAction: Action?
    /// Link failures the step in progress may still retry. The first contact, planning and the
    /// first step share one budget, and a plan made again keeps it: only a completed step renews
    /// it, so it belongs to no single state.
    var retriesLeft: Int
    /// The time of the input being handled.
    private(set) var now: Duration = .zero

    /// Creates a machine.
    /// - Parameters:
    ///   - configuration: the upgrade's configuration.
    ///   - payload: what to install.
    package init(configuration: FirmwareUpgrade.Configuration, payload: UpgradePayload) {
        self.configuration = configuration
        self.payload = payload
        retriesLeft = max(0, configuration.retries)
    }

    /// Feeds an input and returns the next action.
    /// - Parameters:
    ///   - input: what happened.
    ///   - time: the time since the run started (deadlines are measured in it).
    /// - Returns: what to do next.
    package mutating func handle(_ input: Input, at time: Duration = .zero) -> Action {
        now = max(now, time)
        let action = transition(input)
        if case .waitForResume = action {} else { lastAction = action }
        switch action {
        case .succeed: phase = .ended(.succeeded)
        case .fail(let error): phase = .ended(error.code == .cancelled ? .cancelled : .failed)
        default: break
        }
        return action
    }

    /// Control inputs first (cancel, pause, resume), then the state's own transitions (the first
    /// contact and the plan's steps in `+Transitions.swift`, the reboot and the reconnection in
    /// `+Rebooting.swift`), then what any state does with a link failure, a refusal or a failure.
    private mutating func transition(_ input: Input) -> Action {
        if isFinished { return lastAction ?? .fail(error(.cancelled, "the upgrade already ended")) }
        if let action = controlTransition(input) { return action }
        let own: Action? =
            switch phase {
            case .paused: .waitForResume
            case .idle, .requestingParameters, .readingBootloaderInfo: firstContactTransition(input)
            case .planning(let replacing): planningTransition(input, replacing: replacing)
            case .executing(let execution): stepTransition(input, execution)
            case .waitingForReboot(let execution): rebootTransition(input, execution, swapping: false)
            case .waitingForSwap(let execution): rebootTransition(input, execution, swapping: true)
            case .reconnecting(let reconnection): reconnectTransition(input, reconnection)
            case .ended: nil
            }
        return own ?? anyStateTransition(input)
    }

    /// Cancel, pause and resume, taken in every state. A pause keeps the state, data and all,
    /// and resuming re-issues the action that was in flight.
    private mutating func controlTransition(_ input: Input) -> Action? {
        switch input {
        case .cancel:
            return .fail(error(.cancelled, "cancelled by the caller"))
        case .pause:
            if !isPaused { phase = .paused(phase) }
            return .waitForResume
        case .resume:
            if case .paused(let held) = phase { phase = held }
            return lastAction ?? .connect
        default:
            return nil
        }
    }

    // MARK: - Planning and steps

    mutating func planOrReadList() -> Action {
        if payload.planner.needsImageList {
            phase = .planning(replacing: nil)
            return .readImageList
        }
        return makePlan(slots: [], replacing: nil)
    }

    /// Plans from `slots` and issues the plan's first step.
    /// - Parameters:
    ///   - slots: the image list the plan is made from.
    ///   - replacing: the plan being made again and its step, if any.
    mutating func makePlan(slots: [ImageManagement.SlotState], replacing: Execution?) -> Action {
        let context = PlanningContext(
            slots: slots,
            bootloaderMode: device.bootloaderMode,
            noDowngrade: device.noDowngrade,
            configuration: configuration,
            corrupted: corrupted,
            slotCapacities: device.slotCapacities
        )
        let candidate: FirmwareUpgradePlan
        do {
            candidate = try payload.planner.plan(context)
        } catch {
            var failure = FirmwareUpgradeError(error.code, state: state, error.message)
            failure.pendingBootChanges = error.pendingBootChanges
            return .fail(failure)
        }
        // Before the first upload: what the slots hold, so an image too large is refused before
        // its first chunk erases anything (planned again with the sizes).
        if device.slotCapacities == nil, candidate.uploadsToApplicationSlots {
            phase = .planning(replacing: replacing)
            return .readSlotInfo
        }
        plan = candidate
        warnings += candidate.warnings.filter { !warnings.contains($0) }
        if case .revert? = candidate.steps.first {
            resetsBeforeUpload += 1
            if resetsBeforeUpload > 3 {
                let why = candidate.warnings.last ?? "the target slot stays in use"
                return .fail(error(.slotBusy, "the slot stays in use after 3 resets: \(why)"))
            }
        }
        // Retries are not renewed here: a plan made again after a link failure uses the same
        // budget, which only a completed step renews.
        guard let first = Execution.first(of: candidate) else { return .succeed }
        return issue(first)
    }

    /// The step is done: the next one, with the retries renewed.
    mutating func advance(_ execution: Execution) -> Action {
        retriesLeft = max(0, configuration.retries)
        guard let next = execution.next else { return .succeed }
        return issue(next)
    }

    /// Enters the state of `execution`'s step and returns its action.
    mutating func issue(_ execution: Execution) -> Action {
        var execution = execution
        if case .suitInstall = execution.step { execution.installStart = now }
        phase = .executing(execution)
        switch execution.step {
        case .upload(let image, let index):
            return .upload(imageIndex: image, packageIndex: index)
        case .suitUploadEnvelope(let index, let deferInstall):
            return .uploadSUIT(.envelope(packageIndex: index, deferInstall: deferInstall))
        case .suitUploadCache(let index):
            return .uploadSUIT(.cache(packageIndex: index))
        case .eraseAppSettings:
            return .eraseAppSettings
        case .test(let hash):
            return .writeImageState(hash: hash, confirm: false)
        case .confirm(let hash):
            return .writeImageState(hash: hash, confirm: true)
        case .reset, .revert:
            return .reset(force: false)
        case .enterBootloader:
            return .reset(force: false, bootMode: 1)
        case .verify:
            return .readImageList
        case .suitProcess:
            return .processSUITEnvelope
        case .suitInstall:
            return .pollSUIT
        }
    }

    /// Checks the image list after a reset against what the plan promises.
    mutating func verify(_ slots: [ImageManagement.SlotState], _ execution: Execution) -> Action {
        guard case .verify(let expectation) = execution.step else {
            // The list that confirms a reconnection after a failed step: retry that step.
            return unexpected(.imageList(slots))
        }
        switch payload.planner.verify(expectation, plan: execution.plan, slots: slots) {
        case .satisfied:
            return advance(execution)
        case .resetNotApplied:
            return stillPending(execution)
        case .failed(let code, let message) where execution.reboot != nil:
            // Read after a reset: a list read before the device rebooted (a dropped link looks
            // like it going away) shows the old state; final once it must have rebooted.
            return resetNotSeen(message, code: code, execution)
        case .failed(let code, let message):
            return .fail(error(code, message))
        }
    }

    /// A link failure in the middle of a step: reconnect if the step was safe to repeat and
    /// retries are left. For MCUboot the image list read on reconnecting is the truth: the plan is
    /// made again from it (an upload that finished before the link dropped is not repeated, an
    /// interrupted one resumes by `sha`) — or, while verifying, checked again; SUIT repeats the
    /// action.
    mutating func retryAfterLinkFailure(_ cause: any Error & Sendable) -> Action {
        // A request a closed connection refused was never carried out: any may go again.
        let neverSent = (cause as? SMPTransportError)?.nothingSent == true
        guard let retry = lastAction, retriesLeft > 0, neverSent || Self.isRepeatable(retry) else {
            return .fail(
                error(
                    .linkFailed,
                    "the link failed and \(configuration.retries) retries are used up\(haltedHint)",
                    cause
                )
            )
        }
        retriesLeft -= 1
        let execution = phase.execution
        guard payload.planner.needsImageList else {
            return reconnect(then: .repeat(retry, execution), afterLinkLoss: true)
        }
        if case .executing(let verifying) = phase, case .verify = verifying.step {
            return reconnect(then: .verify(verifying), afterLinkLoss: true)
        }
        return reconnect(then: .plan(replacing: execution?.replaced), afterLinkLoss: true)
    }

    /// Whether an action may be performed again after its outcome was lost on the link.
    private static func isRepeatable(_ action: Action) -> Bool {
        switch action {
        case .connect, .readParameters, .readBootloaderInfo, .readImageList, .readSlotInfo, .upload, .writeImageState,
            .probe, .pollSUIT, .readSUITManifests:
            true
        case .uploadSUIT(let upload):
            // An envelope upload processes the envelope when its last chunk arrives.
            if case .cache = upload { true } else { false }
        case .eraseAppSettings, .reset, .processSUITEnvelope, .wait, .waitForResume, .succeed, .fail:
            false
        }
    }

    func unexpected(_ input: Input) -> Action {
        .fail(error(.unsupported, "internal: unexpected \(input) while \(state)"))
    }

    func error(
        _ code: FirmwareUpgradeError.Code,
        _ message: String,
        _ cause: (any Error & Sendable)? = nil
    ) -> FirmwareUpgradeError {
        FirmwareUpgradeError(code, state: state, message, cause: cause)
    }
}
