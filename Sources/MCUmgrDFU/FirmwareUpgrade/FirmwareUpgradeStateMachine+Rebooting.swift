import MCUmgr
import SMPCore

/// Resets and reconnections: the part of the machine where the device goes away.
///
/// Zephyr answers `os reset`, keeps running for its reset delay (250 ms by default) and reboots;
/// until then it still answers with the old state. So after a reset the machine watches: it
/// probes until the device goes away (the link drops, or probes go unanswered), then reconnects
/// and reads the image list. A list that still shows the image pending is final only once the
/// device must have rebooted — the reboot timeout after the reset — since a list read early (a
/// lost probe answer looks like the device going away) proves nothing; until then it watches on.
extension FirmwareUpgradeStateMachine {
    /// A reboot being watched: from the reset until the device answers again.
    struct Reboot: Sendable {
        /// When the reset was answered, or its answer given up on.
        var since: Duration
        /// The device answered the reset: Zephyr reboots within its reset delay of answering.
        var answered: Bool
        /// Probes in a row without an answer.
        var silentProbes = 0
        /// The device was seen gone: the link dropped, or probes went unanswered — two in a row
        /// when the reset's answer was lost, as one lost datagram proves nothing.
        var sawGone = false
        /// Resets sent for this step.
        var attempts = 1
    }

    /// What a reconnection leads to.
    enum AfterReconnect: Sendable {
        /// The step after the reset: check the image list against its expectation.
        case afterReset
        /// Check the image list against the current verify step's expectation again.
        case verify
        /// Read the image list and plan again (after a reset that freed a slot).
        case plan
        /// Check that the bootloader, not the application, answers now, then go on.
        case enteredBootloader
        /// Repeat an action that failed on the link.
        case `repeat`(Action)
    }

    /// A reconnection in progress.
    struct Reconnection: Sendable {
        var since: Duration
        var then: AfterReconnect
        /// The link was lost (not a reset the upgrade sent).
        var afterLinkLoss: Bool
        /// Connection attempts made so far, the current one included.
        var attempts = 1
    }

    /// The reconnection in progress, as callers see it (an event per attempt).
    package var reconnecting: FirmwareUpgrade.Reconnecting? {
        guard state == .reconnecting, let reconnection else { return nil }
        return FirmwareUpgrade.Reconnecting(
            afterLinkLoss: reconnection.afterLinkLoss,
            attempt: reconnection.attempts,
            remaining: max(.zero, configuration.reconnectTimeout - (now - reconnection.since))
        )
    }

    // MARK: - Reconnecting

    /// Starts reconnecting: connect, read the image list, then `then`.
    /// - Parameters:
    ///   - then: what the reconnection leads to.
    ///   - afterLinkLoss: the link was lost, rather than dropped by a reset the upgrade sent.
    mutating func reconnect(then: AfterReconnect, afterLinkLoss: Bool = false) -> Action {
        state = .reconnecting
        reconnection = Reconnection(since: now, then: then, afterLinkLoss: afterLinkLoss)
        return .connect
    }

    mutating func reconnectTransition(_ input: Input) -> Action? {
        guard let reconnection else { return nil }
        switch input {
        case .connected:
            // SUIT devices may have no image list: the repeated action shows the link works.
            if case .repeat(let action) = reconnection.then {
                self.reconnection = nil
                state = Self.state(of: action, default: state)
                return action
            }
            return .readImageList
        case .imageList(let slots):
            self.reconnection = nil
            lastSlots = slots
            return reconnected(slots, then: reconnection.then)
        case .linkFailed(let cause), .deviceRefused(let cause as any Error & Sendable):
            if now - reconnection.since >= configuration.reconnectTimeout {
                self.reconnection = nil
                // With one slot, a device that does not come back may have found nothing it
                // would boot: MCUboot then halts unless built to fall back on its recovery.
                let hint =
                    MCUbootPlanner.Strategy(bootloaderMode) == .singleSlot || configuration.recovery
                        || plan?.throughBootloader == true
                    ? "; MCUboot may have found no valid image and halted: hold the recovery button while resetting the device, then run the upgrade with --recovery"
                    : ""
                return .fail(
                    error(
                        .reconnectFailed,
                        "the device did not answer again within \(configuration.reconnectTimeout)\(hint)",
                        cause
                    )
                )
            }
            return .wait(configuration.reconnectInterval)
        case .waited:
            self.reconnection?.attempts += 1
            return .connect
        default:
            return nil
        }
    }

    /// The device answered again with its image list: go on as the reconnection said.
    private mutating func reconnected(_ slots: [ImageManagement.SlotState], then: AfterReconnect) -> Action {
        switch then {
        case .afterReset:
            stepIndex += 1
            guard case .verify = currentStep else {
                reboot = nil
                return currentStep.map { issue($0) } ?? .succeed
            }
            state = .verifying
            return verify(slots)
        case .verify:
            state = .verifying
            return verify(slots)
        case .plan:
            state = .validating
            return makePlan(slots: slots)
        case .enteredBootloader:
            guard MCUbootPlanner.applicationRuns(slots) else { return advance() }
            // The application runs: the boot mode was lost (a power cut, the reset lost with
            // the link) — or the device does not enter its bootloader on request.
            return resetNotSeen(
                "the device reset and came back running its application: it does not stop in its bootloader on request (that needs Zephyr 4.2 or later with CONFIG_MCUMGR_GRP_OS_RESET_BOOT_MODE, and MCUboot with CONFIG_BOOT_SERIAL_BOOT_MODE or the firmware loader's boot mode). Hold its recovery button while resetting it, then run the upgrade with --recovery",
                code: .bootloaderNotEntered,
                resendOnce:
                    "the device came back running its application after the reset into its bootloader; resetting into it once more"
            )
        case .repeat(let action):
            state = Self.state(of: action, default: state)
            return action
        }
    }

    private static func state(of action: Action, default current: FirmwareUpgrade.State) -> FirmwareUpgrade.State {
        switch action {
        case .readBootloaderInfo: .readingBootloaderInfo
        case .upload, .uploadSUIT: .uploading
        case .writeImageState(_, let confirm): confirm ? .confirming : .testing
        case .pollSUIT, .readSUITManifests: .installing
        default: current
        }
    }

    // MARK: - Rebooting

    /// After a reset (answered, or its answer lost): watch the device go away.
    mutating func watchReboot(answered: Bool) -> Action {
        // A reset sent again (its first answer lost) keeps the count of attempts.
        reboot = Reboot(since: now, answered: answered, attempts: reboot?.attempts ?? 1)
        state = .waitingForReboot
        return .probe
    }

    mutating func rebootTransition(_ input: Input) -> Action? {
        guard var watch = reboot, state == .waitingForReboot || state == .waitingForSwap else { return nil }
        switch input {
        case .probeAnswered:
            watch.silentProbes = 0
            reboot = watch
            // Up all along: read the list once a reboot must have happened.
            if now - watch.since >= configuration.rebootTimeout { return readList(rebooted: false) }
            return .wait(configuration.probeInterval)
        case .probeUnanswered:
            watch.silentProbes += 1
            let gone = watch.silentProbes >= (watch.answered ? 1 : 2)
            if gone { watch.sawGone = true }
            reboot = watch
            return gone ? readList(rebooted: true) : .probe
        case .linkFailed:
            // The link dropped while probing: the device went away.
            watch.sawGone = true
            reboot = watch
            return readList(rebooted: true)
        case .waited:
            guard state == .waitingForSwap else { return .probe }
            switch currentStep {
            case .revert?: return reconnect(then: .plan)
            case .verify?: return reconnect(then: .verify)
            case .enterBootloader?: return reconnect(then: .enteredBootloader)
            default: return reconnect(then: .afterReset)
            }
        default:
            return nil
        }
    }

    /// Waits for the swap when the device rebooted (only bootloaders that copy images take
    /// time at boot), then reconnects.
    private mutating func readList(rebooted: Bool) -> Action {
        state = .waitingForSwap
        let strategy = MCUbootPlanner.Strategy(bootloaderMode)
        return .wait(rebooted && strategy.copiesAtBoot ? configuration.estimatedSwapTime : .zero)
    }

    /// After the reset the image is still pending, or nothing runs (the device is in its
    /// bootloader): watch on while it is too early to tell, then decide.
    mutating func stillPending() -> Action {
        guard lastSlots.contains(where: \.isActive) else {
            return resetNotSeen(
                "the device reset and came back in its bootloader, running nothing: MCUboot did not start the application (it found no image it would boot, or the recovery button is held). The device was reset \(resetsSent) and is left as it is",
                code: .imageNotActive
            )
        }
        let pending = pendingDescription()
        // A reset whose answer was lost proves nothing by the link dropping after it: the link
        // may have dropped first and taken the reset with it. A pending image on a device running
        // its old one only gains from another reset, so that case gets one more.
        return resetNotSeen(
            "the device reset and came back with \(pending) still pending: the bootloader did not swap. Likely causes: no MCUboot under the application, an unsigned image or one signed with a key MCUboot does not trust, or a downgrade MCUboot refused. The device was reset \(resetsSent) and is left as it is",
            code: .notSwapped,
            resendOnce: reboot?.answered == false
                ? "the image is still pending after a reset whose answer was lost (the link may have dropped before the reset arrived); resetting once more"
                : nil
        )
    }

    /// The list read after a reset does not show its effect: watch on while it is too early to
    /// tell; once the device must have rebooted, fail with `message` if it was seen resetting
    /// (or answered the reset) — and if its answer was lost and it never went away, the reset
    /// never arrived: send the same reset again, a few times at most.
    /// - Parameters:
    ///   - message: the failure, once final.
    ///   - code: its code.
    ///   - resendOnce: when set, the warning with which the reset is sent once more even if the
    ///     device answered it or was seen going away. A reset into the bootloader whose boot mode
    ///     was lost (a power cut before the reboot, the reset lost with a dropped link) leaves the
    ///     application running just as a device without the boot mode does; a reset whose answer
    ///     was lost with the link may never have arrived. A second reset does no harm in either
    ///     state, and a second outcome alike is final.
    mutating func resetNotSeen(
        _ message: String,
        code: FirmwareUpgradeError.Code,
        resendOnce warning: String? = nil
    ) -> Action {
        guard var watch = reboot else {
            return .fail(error(code, "\(message) (no reset was watched)"))
        }
        if now - watch.since < configuration.rebootTimeout {
            watch.silentProbes = 0
            reboot = watch
            state = .waitingForReboot
            return .probe
        }
        // Seen resetting: final, unless this case gets one more reset. Not seen: the reset never
        // arrived, and is sent again like any lost request the state still needs.
        let seen = watch.answered || watch.sawGone
        let resend = seen && watch.attempts < 2 ? warning : nil
        if seen && resend == nil {
            reboot = nil
            let unseen =
                watch.sawGone
                ? "" : " (it was never seen going away; if it did not reset at all, something on it blocked the reset)"
            return .fail(error(code, message + unseen))
        }
        guard watch.attempts <= max(1, configuration.retries) else {
            reboot = nil
            return .fail(error(.resetFailed, "the device did not reset after \(watch.attempts) resets"))
        }
        watch.attempts += 1
        reboot = watch
        warnings.append(
            resend ?? "the device did not reset (its answer was lost and it kept answering); resetting once more"
        )
        guard let plan,
            let resetIndex = plan.steps[...stepIndex].lastIndex(where: {
                if case .revert = $0 { true } else { $0 == .reset || $0 == .enterBootloader }
            })
        else { return unexpected(.imageList(lastSlots)) }
        stepIndex = resetIndex
        return issue(plan.steps[resetIndex])
    }

    /// How many resets were sent for this step, in words.
    private var resetsSent: String {
        switch reboot?.attempts ?? 1 {
        case 1: "once"
        case 2: "twice"
        case let count: "\(count) times"
        }
    }

    private func pendingDescription() -> String {
        let pending = lastSlots.filter { $0.isPending && !$0.isActive }
        guard !pending.isEmpty else { return "the new image" }
        return pending.map { "version \($0.version) (image \($0.imageNumber), slot \($0.slot))" }
            .joined(separator: ", ")
    }
}
