import Foundation
import MCUboot
import SMPCore

/// The upgrade's transitions, as a value: feed it what happened (``Input``), it answers what to
/// do next (``Action``). No I/O and no time; ``FirmwareUpgrade`` performs the actions over a
/// client and feeds the outcomes back, and table tests drive it directly.
///
/// Policies it holds:
/// - probes (parameters, bootloader info) never fail the upgrade; the image list does;
/// - a step that failed on the link is retried after a reconnection, up to
///   ``FirmwareUpgrade/Configuration/retries`` times per step (an upload resumes by `sha`);
/// - a lost answer to a reset counts as a reset (the device may already be rebooting): the
///   outcome is checked after reconnecting, and a reset that did not happen is sent again (as
///   often as a step is retried, at least once);
/// - a device that did not report its bootloader mode and refuses test or confirm as
///   unsupported is planned again as DirectXIP without revert (upload, reset);
/// - a slot held by another image marked for boot is freed by resetting, then planned again
///   (at most three times);
/// - pause holds the next action until resume; cancel ends in every state.
public struct FirmwareUpgradeStateMachine: Sendable {
    /// What the driver does next.
    public enum Action: Sendable, Hashable {
        /// Read the device's MCUmgr parameters (OS 6), tolerating no answer.
        case readParameters
        /// Read the bootloader name and mode (OS 8), tolerating no answer.
        case readBootloaderInfo
        /// Read the image list (image 0 read) and report it as ``Input/imageList(_:)``.
        case readImageList
        /// Perform one step of the plan; report ``Input/stepCompleted(slots:)``.
        case perform(FirmwareUpgradePlan.Step)
        /// Close the connection and wait for the bootloader; then report ``Input/swapWaitOver``.
        case waitForSwap(Duration)
        /// Connect again until the device answers; report ``Input/reconnected`` or
        /// ``Input/linkFailed(_:)`` at the deadline.
        case reconnect
        /// Hold until the caller resumes; then report ``Input/resume``.
        case waitForResume
        /// The plan is done and verified.
        case succeed
        /// Stop with this error.
        case fail(FirmwareUpgradeError)
    }

    /// What happened.
    public enum Input: Sendable {
        /// Begin.
        case start
        /// The parameters request finished (answered or not).
        case parametersRead
        /// The bootloader probes finished; `nil` for what the device did not answer.
        case bootloaderInfo(name: String?, mode: OSManagement.MCUbootMode?)
        /// The image list.
        case imageList([ImageManagement.SlotState])
        /// The step finished; test and confirm pass the list they were answered with.
        case stepCompleted(slots: [ImageManagement.SlotState]?)
        /// The link failed (timeout, disconnect) while performing the last action.
        case linkFailed(any Error & Sendable)
        /// The device refused the last action.
        case deviceRefused(SMPDeviceError)
        /// Anything else that stops the upgrade.
        case failed(FirmwareUpgradeError.Code, String)
        /// The swap wait is over.
        case swapWaitOver
        /// A connection answers again.
        case reconnected
        /// The caller paused (reported between actions, or after stopping an upload).
        case pause
        /// The caller resumed.
        case resume
        /// The caller cancelled.
        case cancel
    }

    /// The configuration in force.
    public let configuration: FirmwareUpgrade.Configuration
    /// The images to install (MCUboot images, or a SUIT envelope and caches).
    public let images: [FirmwarePackage.Image]
    /// Whether the images are a SUIT package.
    public let isSUIT: Bool

    /// Where the upgrade is.
    public private(set) var state: FirmwareUpgrade.State = .idle
    /// The current plan, once made.
    public private(set) var plan: FirmwareUpgradePlan?
    /// Index of the step in progress.
    public private(set) var stepIndex = 0
    /// The bootloader mode the device reported.
    public private(set) var bootloaderMode: OSManagement.MCUbootMode?
    /// The bootloader name the device reported.
    public private(set) var bootloaderName: String?
    /// The first image list read, for the summary.
    public private(set) var initialSlots: [ImageManagement.SlotState]?
    /// Whether the caller paused.
    public private(set) var isPaused = false

    private var lastAction: Action?
    private var afterReconnect: Action?
    private var retriesLeft: Int
    private var resetsBeforeUpload = 0
    private var resetAttempts = 0
    private var stateBeforePause: FirmwareUpgrade.State = .idle

    /// Creates a machine.
    /// - Parameters:
    ///   - configuration: the upgrade's configuration.
    ///   - images: the images to install.
    ///   - isSUIT: whether they form a SUIT package.
    public init(configuration: FirmwareUpgrade.Configuration, images: [FirmwarePackage.Image], isSUIT: Bool = false) {
        self.configuration = configuration
        self.images = images
        self.isSUIT = isSUIT
        self.retriesLeft = max(0, configuration.retries)
    }

    /// The step in progress, if any.
    public var currentStep: FirmwareUpgradePlan.Step? {
        guard let plan, stepIndex < plan.steps.count else { return nil }
        return plan.steps[stepIndex]
    }

    /// Whether the upgrade ended.
    public var isFinished: Bool { state == .succeeded || state == .failed || state == .cancelled }

    /// Feeds an input and returns the next action.
    /// - Parameter input: what happened.
    /// - Returns: what to do next.
    public mutating func handle(_ input: Input) -> Action {
        let action = transition(input)
        if case .waitForResume = action {} else { lastAction = action }
        switch action {
        case .succeed: state = .succeeded
        case .fail(let error): state = error.code == .cancelled ? .cancelled : .failed
        default: break
        }
        return action
    }

    private mutating func transition(_ input: Input) -> Action {
        if isFinished { return lastAction ?? .fail(error(.cancelled, "the upgrade already ended")) }
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
            return lastAction ?? .readParameters
        default:
            break
        }
        if isPaused { return .waitForResume }

        switch (state, input) {
        case (.idle, .start):
            state = .requestingParameters
            return .readParameters

        case (.requestingParameters, .parametersRead):
            state = .readingBootloaderInfo
            return .readBootloaderInfo

        case (.readingBootloaderInfo, .bootloaderInfo(let name, let mode)):
            bootloaderName = name
            bootloaderMode = mode
            if isSUIT {
                do {
                    plan = try FirmwareUpgradePlanner.planSUIT(images: images)
                } catch {
                    return .fail(FirmwareUpgradeError(error.code, state: state, error.message))
                }
                return beginSteps()
            }
            state = .validating
            return .readImageList

        case (.validating, .imageList(let slots)):
            if initialSlots == nil { initialSlots = slots }
            do {
                plan = try FirmwareUpgradePlanner.plan(
                    images: images,
                    slots: slots,
                    bootloaderMode: bootloaderMode,
                    mode: configuration.mode,
                    eraseAppSettings: configuration.eraseAppSettings
                )
            } catch {
                return .fail(FirmwareUpgradeError(error.code, state: state, error.message))
            }
            if plan?.steps == [.resetBeforeUpload] {
                resetsBeforeUpload += 1
                if resetsBeforeUpload > 3 {
                    let why = plan?.warnings.last ?? "the target slot stays in use"
                    return .fail(error(.slotBusy, "the slot stays in use after 3 resets: \(why)"))
                }
            }
            return beginSteps()

        case (.verifying, .imageList(let slots)):
            guard case .verify(let expectation) = currentStep, let plan else { return unexpected(input) }
            switch FirmwareUpgradePlanner.verify(expectation, plan: plan, slots: slots) {
            case .satisfied:
                return advance()
            case .resetNotApplied:
                guard resetAttempts < max(2, configuration.retries + 1),
                    let resetIndex = plan.steps[..<stepIndex].lastIndex(of: .reset)
                else {
                    return .fail(error(.resetFailed, "the new image is still pending after \(resetAttempts) resets"))
                }
                stepIndex = resetIndex
                return issue(.reset)
            case .failed(let code, let message):
                return .fail(error(code, message))
            }

        case (_, .stepCompleted(let slots)):
            guard let step = currentStep else { return unexpected(input) }
            switch step {
            case .test(let hash), .confirm(let hash):
                let confirm = if case .confirm = step { true } else { false }
                if let slots {
                    let verdict = FirmwareUpgradePlanner.checkMarked(hash: hash, confirm: confirm, slots: slots)
                    if case .failed(let code, let message) = verdict { return .fail(error(code, message)) }
                }
                return advance()
            case .reset, .resetBeforeUpload:
                return awaitReboot()
            default:
                return advance()
            }

        case (.waitingForSwap, .swapWaitOver):
            state = .reconnecting
            afterReconnect = nil
            return .reconnect

        case (.reconnecting, .reconnected):
            if let next = afterReconnect {
                afterReconnect = nil
                return resumeAfterReconnect(next)
            }
            // After a reset.
            if currentStep == .resetBeforeUpload {
                state = .validating
                return .readImageList
            }
            return advance()

        case (.reconnecting, .linkFailed(let cause)):
            return .fail(
                error(
                    .reconnectFailed,
                    "the device did not answer within \(configuration.reconnectTimeout) after the reset",
                    cause
                )
            )

        case (_, .linkFailed(let cause)):
            if state == .resetting {
                // The answer to the reset was lost; the device may be rebooting already.
                return awaitReboot()
            }
            guard retriesLeft > 0, let retry = lastAction else {
                return .fail(
                    error(.linkFailed, "the link failed and \(configuration.retries) retries are used up", cause)
                )
            }
            retriesLeft -= 1
            afterReconnect = retry
            state = .reconnecting
            return .reconnect

        case (_, .deviceRefused(let refusal)):
            if bootloaderMode == nil && refusal.returnCode == .notSupported
                && (state == .testing || state == .confirming)
            {
                // A device that did not name its bootloader and has no image state write is a
                // DirectXIP build without revert: plan again as such.
                bootloaderMode = .directXIP
                state = .validating
                return .readImageList
            }
            return .fail(
                error(
                    .deviceRejected,
                    "the device refused \(currentStep?.description ?? "\(state)"): \(refusal)",
                    refusal
                )
            )

        case (_, .failed(let code, let message)):
            return .fail(error(code, message))

        default:
            return unexpected(input)
        }
    }

    // MARK: - Steps

    private mutating func beginSteps() -> Action {
        stepIndex = 0
        retriesLeft = max(0, configuration.retries)
        guard let step = currentStep else {
            state = .succeeded
            return .succeed
        }
        return issue(step)
    }

    private mutating func advance() -> Action {
        stepIndex += 1
        retriesLeft = max(0, configuration.retries)
        guard let step = currentStep else { return .succeed }
        return issue(step)
    }

    private mutating func issue(_ step: FirmwareUpgradePlan.Step) -> Action {
        switch step {
        case .upload, .suitUploadEnvelope, .suitUploadCache: state = .uploading
        case .eraseAppSettings: state = .erasingAppSettings
        case .test: state = .testing
        case .confirm: state = .confirming
        case .reset:
            state = .resetting
            resetAttempts += 1
        case .resetBeforeUpload: state = .resetting
        case .verify:
            state = .verifying
            return .readImageList
        case .suitProcess, .suitInstall: state = .installing
        }
        return .perform(step)
    }

    private mutating func awaitReboot() -> Action {
        state = .waitingForSwap
        let strategy = FirmwareUpgradePlanner.Strategy(bootloaderMode)
        let wait = strategy.isDirectXIP || isSUIT ? Duration.zero : configuration.estimatedSwapTime
        return .waitForSwap(wait)
    }

    private mutating func resumeAfterReconnect(_ action: Action) -> Action {
        switch action {
        case .perform(let step): return issue(step)
        case .readImageList:
            if case .verify = currentStep { state = .verifying } else { state = .validating }
            return .readImageList
        default: return action
        }
    }

    private func unexpected(_ input: Input) -> Action {
        .fail(error(.unsupported, "internal: unexpected \(input) while \(state)"))
    }

    private func error(
        _ code: FirmwareUpgradeError.Code,
        _ message: String,
        _ cause: (any Error & Sendable)? = nil
    ) -> FirmwareUpgradeError {
        FirmwareUpgradeError(code, state: state, message, cause: cause)
    }
}
