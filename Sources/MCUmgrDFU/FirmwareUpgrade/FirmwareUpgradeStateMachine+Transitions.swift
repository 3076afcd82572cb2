import MCUmgr
import SMPCore
import SMPLink

// The transitions of each state, one function per group of states: `nil` hands the input on to
// what every state does with it (`anyStateTransition`). The order inside a function is the order
// of precedence.
extension FirmwareUpgradeStateMachine {
    /// Connecting, the parameters and the bootloader info: the first contact.
    mutating func firstContactTransition(_ input: Input) -> Action? {
        switch (phase, input) {
        case (.idle, .start):
            phase = .requestingParameters
            return .connect
        case (.requestingParameters, .connected):
            return .readParameters
        case (.requestingParameters, .parametersRead), (.requestingParameters, .deviceRefused):
            // A refusal: an old device without the parameters command still answers; go on.
            phase = .readingBootloaderInfo
            return .readBootloaderInfo(query: nil)
        case (.requestingParameters, .linkFailed(let cause)):
            // The first contact: a device that does not answer is unreachable; fail fast. A port
            // that refused (nothing listens there) is not a silent device, and the message says
            // which, for those who read the message and not the cause.
            let refused = (cause as? SMPTransportError)?.code == .connectionRefused
            return .fail(
                error(.linkFailed, refused ? "the device refused the connection" : "the device does not answer", cause)
            )
        case (.readingBootloaderInfo, .bootloaderName(let name)):
            device.bootloaderName = name
            guard let name, name.lowercased() == "mcuboot" else { return planOrReadList() }
            return .readBootloaderInfo(query: "mode")
        case (.readingBootloaderInfo, .bootloaderMode(let mode, let refusesDowngrades)):
            device.bootloaderMode = mode
            device.noDowngrade = refusesDowngrades
            return planOrReadList()
        case (.readingBootloaderInfo, .deviceRefused):
            // No bootloader info: plan without it.
            return planOrReadList()
        case (.readingBootloaderInfo, .linkFailed(let cause)):
            // The device answered before: a lost answer here is the link, not a device without
            // bootloader info, and the mode decides the plan — ask again after reconnecting. Plan
            // without it only when the retries are spent (rather than hang, as Nordic's Android
            // library once did).
            if retriesLeft > 0, let retry = lastAction {
                retriesLeft -= 1
                return reconnect(then: .repeat(retry, nil), afterLinkLoss: true)
            }
            warnings.append("the device did not answer bootloader info (\(cause)); assuming MCUboot")
            return planOrReadList()
        default:
            return nil
        }
    }

    /// Planning: the image list, then (before the first upload) the slot sizes.
    mutating func planningTransition(_ input: Input, replacing: Execution?) -> Action? {
        switch input {
        case .imageList(let slots):
            if initialSlots == nil { initialSlots = slots }
            lastSlots = slots
            return makePlan(slots: slots, replacing: replacing)
        case .slotInfo(let images):
            device.slotCapacities = images
            return makePlan(slots: lastSlots, replacing: replacing)
        case .deviceRefused where lastAction == .readSlotInfo:
            // A device without slot information: the first chunk's answer checks the size.
            device.slotCapacities = []
            return makePlan(slots: lastSlots, replacing: replacing)
        default:
            return nil
        }
    }

    /// A step of the plan: the transitions of the state it is performed in.
    mutating func stepTransition(_ input: Input, _ execution: Execution) -> Action? {
        switch execution.state {
        case .verifying:
            guard case .imageList(let slots) = input else { return nil }
            lastSlots = slots
            return verify(slots, execution)
        case .uploading, .erasingAppSettings: return writingTransition(input, execution)
        case .testing, .confirming: return markingTransition(input, execution)
        case .resetting, .enteringBootloader: return resettingTransition(input, execution)
        case .installing: return installingTransition(input, execution)
        case .idle, .requestingParameters, .readingBootloaderInfo, .validating, .waitingForReboot, .waitingForSwap,
            .reconnecting, .succeeded, .failed, .cancelled:
            return nil
        }
    }

    /// Uploading and erasing the settings.
    mutating func writingTransition(_ input: Input, _ execution: Execution) -> Action? {
        switch (execution.state, input) {
        case (.uploading, .uploadCorrupted(let cause)):
            // The session ended with the slot holding something else than the file: upload it
            // again (the list cannot tell, it shows the hash from the image's TLVs).
            guard case .upload(_, let index) = lastAction, retriesLeft > 0 else {
                return .fail(error(.deviceRejected, "the device's hash check rejected the upload", cause))
            }
            retriesLeft -= 1
            corrupted.insert(index)
            warnings.append("the device's hash check rejected the uploaded image; uploading it again")
            return reconnect(then: .plan(replacing: execution.replaced))
        case (.uploading, .deviceRefused(let refusal))
        where execution.plan.throughBootloader && refusal.matches(ImageManagement.ReturnCode.noFreeSlot)
            && retriesLeft > 0:
            // The application refuses to write its own slot: the device left its bootloader (a
            // power cut or a reset mid-upload). Read where it is and plan again, which enters
            // the bootloader again.
            retriesLeft -= 1
            warnings.append("the device left its bootloader during the upload; entering it again")
            return reconnect(then: .plan(replacing: execution.replaced))
        case (_, .done):
            return stepDone(execution)
        case (.erasingAppSettings, .outcomeUnknown(let cause)):
            warnings.append("the answer to the settings erase was lost; it may not have happened (\(cause))")
            return advance(execution)
        case (.erasingAppSettings, .deviceRefused(let refusal)):
            warnings.append("the device did not erase its settings storage: \(refusal)")
            return advance(execution)
        default:
            return nil
        }
    }

    /// An upload, a settings erase or a SUIT processing request finished.
    private mutating func stepDone(_ execution: Execution) -> Action {
        if case .upload(_, let index) = lastAction { corrupted.remove(index) }
        if case .suitInstall = execution.step { return .pollSUIT }
        return advance(execution)
    }

    /// Testing or confirming an image.
    mutating func markingTransition(_ input: Input, _ execution: Execution) -> Action? {
        switch input {
        case .stateWritten(let slots):
            lastSlots = slots
            guard case .writeImageState(let hash, let confirm) = lastAction else { return unexpected(input) }
            if case .failed(let code, let message) = payload.planner.checkMarked(
                hash: hash,
                confirm: confirm,
                slots: slots
            ) {
                return .fail(error(code, message))
            }
            return advance(execution)
        case .outcomeUnknown(let cause) where execution.state == .confirming:
            // A confirm by hash is sent once (`StateWrite.isIdempotent`): whether it arrived, and
            // whether the image still runs, shows in the list the plan is made again from.
            return retryAfterLinkFailure(cause)
        case .deviceRefused(let refusal) where refusal.matches(ImageManagement.ReturnCode.hashNotFound):
            // The image to mark is gone: the bootloader erased it (a revert after a power loss,
            // a failed validation).
            return .fail(
                error(
                    .imageMissingAfterReset,
                    "\(execution.step) failed: the device no longer holds the image (the bootloader erased it)",
                    refusal
                )
            )
        case .deviceRefused(let refusal) where device.bootloaderMode == nil && refusal.returnCode == .notSupported:
            // A device that did not name its bootloader and has no image state write is a
            // DirectXIP build without revert: plan again as such.
            device.bootloaderMode = .directXIP
            phase = .planning(replacing: execution.replaced)
            return .readImageList
        default:
            return nil
        }
    }

    /// Resetting, or resetting into the bootloader.
    mutating func resettingTransition(_ input: Input, _ execution: Execution) -> Action? {
        switch input {
        case .done:
            return watchReboot(answered: true, execution)
        case .outcomeUnknown(let cause):
            warnings.append("the answer to the reset was lost (\(cause)); watching whether the device resets")
            return watchReboot(answered: false, execution)
        case .deviceRefused(let refusal):
            guard refusal.returnCode == .busy, case .reset(false, let bootMode) = lastAction else {
                return .fail(
                    error(
                        .deviceRejected,
                        "the device refused \(execution.step): \(refusal)",
                        refusal
                    )
                )
            }
            warnings.append("the device refused the reset as busy; resetting with force")
            return .reset(force: true, bootMode: bootMode)
        default:
            return nil
        }
    }

    /// SUIT: processing the envelope and installing, serving the resources the device asks for.
    mutating func installingTransition(_ input: Input, _ execution: Execution) -> Action? {
        switch input {
        case .done:
            return stepDone(execution)
        case .outcomeUnknown(let cause):
            // Processing the envelope: whether it started shows in the polling that follows.
            warnings.append("the answer to processing the envelope was lost (\(cause)); polling the device")
            return advance(execution)
        case .suitRequested(let resource, let session):
            guard payload.resource(resource) != nil else {
                return .fail(
                    error(.resourceNotFound, "the device asked for \(resource), which the package does not hold")
                )
            }
            warnings.append("the device asked for \(resource)")
            return .uploadSUIT(.resource(name: resource, session: session))
        case .deviceRefused(let refusal) where refusal.returnCode == .badState && lastActionUploadsAResource:
            // A resource chunk refused as out of state: the device no longer waits for it —
            // typically a retried last chunk whose first answer was lost after it completed the
            // resource. Whether it installed shows in the polling.
            warnings.append("the device no longer waited for the resource (\(refusal)); polling it")
            return .pollSUIT
        case .suitNothingRequested:
            return .readSUITManifests
        case .suitManifests(let digests):
            guard case .suitInstall(let digest) = execution.step else { return unexpected(input) }
            if digests.contains(digest) { return advance(execution) }
            if now - (execution.installStart ?? now) >= configuration.suitInstallTimeout {
                return .fail(
                    error(
                        .suitNotInstalled,
                        "the device did not install the envelope within \(configuration.suitInstallTimeout)"
                    )
                )
            }
            return .wait(configuration.suitPollInterval)
        case .waited:
            return .pollSUIT
        default:
            return nil
        }
    }

    private var lastActionUploadsAResource: Bool {
        if case .uploadSUIT(.resource) = lastAction { true } else { false }
    }

    /// What every state does with a link failure, a refusal or a failure its own transitions
    /// left alone; anything else is unexpected.
    mutating func anyStateTransition(_ input: Input) -> Action {
        switch input {
        case .linkFailed(let cause):
            return retryAfterLinkFailure(cause)
        case .deviceRefused(let refusal):
            return .fail(
                error(
                    .deviceRejected,
                    // The refusal is the cause, which the error's description shows once.
                    "the device refused \(currentStep?.description ?? "\(state)")",
                    refusal
                )
            )
        case .failed(let code, let message):
            return .fail(error(code, message))
        default:
            return unexpected(input)
        }
    }
}
