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

    /// Where the upgrade is.
    package internal(set) var state: FirmwareUpgrade.State = .idle {
        didSet { if state != oldValue { visited.append(state) } }
    }
    /// Every state entered, in order (one input may pass through several, e.g. verifying on its
    /// way to confirming); the driver shows each once.
    package private(set) var visited: [FirmwareUpgrade.State] = []
    /// The current plan, once made.
    package private(set) var plan: FirmwareUpgradePlan?
    /// Index of the step in progress.
    package internal(set) var stepIndex = 0
    /// The bootloader mode the device reported.
    package internal(set) var bootloaderMode: OSManagement.MCUbootMode?
    /// The bootloader name the device reported.
    package internal(set) var bootloaderName: String?
    /// Whether the device reported that its bootloader refuses downgrades.
    package internal(set) var noDowngrade = false
    /// The first image list read, for the summary.
    package internal(set) var initialSlots: [ImageManagement.SlotState]?
    /// The last image list read or answered.
    package internal(set) var lastSlots: [ImageManagement.SlotState] = []
    /// Whether the caller paused.
    package private(set) var isPaused = false
    /// The slot sizes the device reported (empty when it has no slot information), read once
    /// before the first upload; `nil` until then.
    package internal(set) var slotCapacities: [ImageManagement.SlotInfo.Image]?
    /// Things worth telling a person, in order; the driver shows each once.
    package internal(set) var warnings: [String] = []

    /// The last action handed out (re-issued after a pause or a reconnection).
    var lastAction: Action?
    private var stateBeforePause: FirmwareUpgrade.State = .idle
    var retriesLeft: Int
    package private(set) var resetsBeforeUpload = 0
    /// The reboot in progress, from the reset until the device answers again.
    var reboot: Reboot?
    /// The reconnection in progress.
    var reconnection: Reconnection?
    /// When SUIT installation began.
    var installStart: Duration?
    /// Uploads (by position in the payload) the device's hash check rejected.
    var corrupted: Set<Int> = []
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

    /// The step in progress, if any.
    package var currentStep: FirmwareUpgradePlan.Step? {
        guard let plan, stepIndex < plan.steps.count else { return nil }
        return plan.steps[stepIndex]
    }

    /// Whether the upgrade ended.
    package var isFinished: Bool { state == .succeeded || state == .failed || state == .cancelled }

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
        case .succeed: state = .succeeded
        case .fail(let error): state = error.code == .cancelled ? .cancelled : .failed
        default: break
        }
        return action
    }

    /// Control inputs first (cancel, pause, resume), then the reboot or reconnection in
    /// progress, then the state's own transitions (`+Transitions.swift`), then what any state does
    /// with a link failure, a refusal or a failure.
    private mutating func transition(_ input: Input) -> Action {
        if isFinished { return lastAction ?? .fail(error(.cancelled, "the upgrade already ended")) }
        if let action = controlTransition(input) { return action }
        if isPaused { return .waitForResume }
        if reboot != nil, let action = rebootTransition(input) { return action }
        if reconnection != nil, let action = reconnectTransition(input) { return action }
        let own: Action? =
            switch state {
            case .idle, .requestingParameters, .readingBootloaderInfo: firstContactTransition(input)
            case .validating, .verifying: imageListTransition(input)
            case .uploading, .erasingAppSettings: writingTransition(input)
            case .testing, .confirming: markingTransition(input)
            case .resetting, .enteringBootloader: resettingTransition(input)
            case .installing: installingTransition(input)
            case .waitingForReboot, .waitingForSwap, .reconnecting, .succeeded, .failed, .cancelled: nil
            }
        return own ?? anyStateTransition(input)
    }

    /// Cancel, pause and resume, taken in every state.
    private mutating func controlTransition(_ input: Input) -> Action? {
        switch input {
        case .cancel:
            return .fail(error(.cancelled, "cancelled by the caller"))
        case .pause:
            if !isPaused {
                isPaused = true
                stateBeforePause = state
            }
            return .waitForResume
        case .resume:
            isPaused = false
            state = stateBeforePause
            return lastAction ?? .connect
        default:
            return nil
        }
    }

    // MARK: - Planning and steps

    mutating func planOrReadList() -> Action {
        if payload.planner.needsImageList {
            state = .validating
            return .readImageList
        }
        return makePlan(slots: [])
    }

    mutating func makePlan(slots: [ImageManagement.SlotState]) -> Action {
        reboot = nil
        let context = PlanningContext(
            slots: slots,
            bootloaderMode: bootloaderMode,
            noDowngrade: noDowngrade,
            configuration: configuration,
            corrupted: corrupted,
            slotCapacities: slotCapacities
        )
        do {
            let candidate = try payload.planner.plan(context)
            // Before the first upload: what the slots hold, so an image too large is refused
            // before its first chunk erases anything (planned again with the sizes).
            if slotCapacities == nil, candidate.uploadsToApplicationSlots {
                state = .validating
                return .readSlotInfo
            }
            plan = candidate
        } catch {
            var failure = FirmwareUpgradeError(error.code, state: state, error.message)
            failure.pendingBootChanges = error.pendingBootChanges
            return .fail(failure)
        }
        if let plan { warnings += plan.warnings.filter { !warnings.contains($0) } }
        if case .revert? = plan?.steps.first {
            resetsBeforeUpload += 1
            if resetsBeforeUpload > 3 {
                let why = plan?.warnings.last ?? "the target slot stays in use"
                return .fail(error(.slotBusy, "the slot stays in use after 3 resets: \(why)"))
            }
        }
        // Retries are not renewed here: a plan made again after a link failure uses the same
        // budget, which only a completed step renews.
        stepIndex = 0
        guard let step = currentStep else { return .succeed }
        return issue(step)
    }

    mutating func advance() -> Action {
        reboot = nil
        stepIndex += 1
        retriesLeft = max(0, configuration.retries)
        guard let step = currentStep else { return .succeed }
        return issue(step)
    }

    mutating func issue(_ step: FirmwareUpgradePlan.Step) -> Action {
        switch step {
        case .upload(let image, let index):
            state = .uploading
            return .upload(imageIndex: image, packageIndex: index)
        case .suitUploadEnvelope(let index, let deferInstall):
            state = .uploading
            return .uploadSUIT(.envelope(packageIndex: index, deferInstall: deferInstall))
        case .suitUploadCache(let index):
            state = .uploading
            return .uploadSUIT(.cache(packageIndex: index))
        case .eraseAppSettings:
            state = .erasingAppSettings
            return .eraseAppSettings
        case .test(let hash):
            state = .testing
            return .writeImageState(hash: hash, confirm: false)
        case .confirm(let hash):
            state = .confirming
            return .writeImageState(hash: hash, confirm: true)
        case .reset, .revert:
            state = .resetting
            return .reset(force: false)
        case .enterBootloader:
            state = .enteringBootloader
            return .reset(force: false, bootMode: 1)
        case .verify:
            state = .verifying
            return .readImageList
        case .suitProcess:
            state = .installing
            return .processSUITEnvelope
        case .suitInstall:
            state = .installing
            installStart = now
            return .pollSUIT
        }
    }

    /// Checks the image list after a reset against what the plan promises.
    mutating func verify(_ slots: [ImageManagement.SlotState]) -> Action {
        guard case .verify(let expectation) = currentStep, let plan else {
            // The list that confirms a reconnection after a failed step: retry that step.
            return unexpected(.imageList(slots))
        }
        switch payload.planner.verify(expectation, plan: plan, slots: slots) {
        case .satisfied:
            return advance()
        case .resetNotApplied:
            return stillPending()
        case .failed(let code, let message) where reboot != nil:
            // Read after a reset: a list read before the device rebooted (a dropped link looks
            // like it going away) shows the old state; final once it must have rebooted.
            return resetNotSeen(message, code: code)
        case .failed(let code, let message):
            return .fail(error(code, message))
        }
    }

    /// A link failure in the middle of a step: reconnect if the step was safe to repeat and
    /// retries are left. For MCUboot the image list read on reconnecting is the truth: the plan is
    /// made again from it (an upload that finished before the link dropped is not repeated, an
    /// interrupted one resumes by `sha`); SUIT repeats the action.
    mutating func retryAfterLinkFailure(_ cause: any Error & Sendable) -> Action {
        guard let retry = lastAction, retriesLeft > 0, Self.isRepeatable(retry) else {
            return .fail(
                error(.linkFailed, "the link failed and \(configuration.retries) retries are used up", cause)
            )
        }
        retriesLeft -= 1
        guard payload.planner.needsImageList else { return reconnect(then: .repeat(retry), afterLinkLoss: true) }
        return reconnect(then: state == .verifying ? .verify : .plan, afterLinkLoss: true)
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
