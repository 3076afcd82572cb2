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
    /// A reboot being watched: from the reset until the step after it (`Execution.reboot`).
    package struct Reboot: Sendable, Hashable {
        /// When the reset was answered, or its answer given up on.
        package internal(set) var since: Duration
        /// The device answered the reset: Zephyr reboots within its reset delay of answering.
        package internal(set) var answered: Bool
        /// Probes in a row without an answer.
        package internal(set) var silentProbes = 0
        /// The device was seen gone: the link dropped, or probes went unanswered — two in a row
        /// when the reset's answer was lost, as one lost datagram proves nothing.
        package internal(set) var sawGone = false
        /// Resets sent for this step.
        package internal(set) var attempts = 1
    }

    /// What a reconnection leads to, with the data of the state it re-enters.
    package enum AfterReconnect: Sendable, Hashable {
        /// The step after the reset: check the image list against its expectation.
        case afterReset(Execution)
        /// Check the image list against the current verify step's expectation again.
        case verify(Execution)
        /// Read the image list and plan again (after a reset that freed a slot, a link failure,
        /// a corrupted upload), replacing this plan and step if any.
        case plan(replacing: Execution?)
        /// Check that the bootloader, not the application, answers now, then go on.
        case enteredBootloader(Execution)
        /// Repeat an action that failed on the link: the bootloader info (no plan yet), or a
        /// SUIT step of `execution`.
        case `repeat`(Action, Execution?)

        /// The plan and step it returns to, if any.
        package var execution: Execution? {
            switch self {
            case .afterReset(let execution), .verify(let execution), .enteredBootloader(let execution): execution
            case .plan(let replacing): replacing
            case .repeat(_, let execution): execution
            }
        }
    }

    /// A reconnection in progress.
    package struct Reconnection: Sendable, Hashable {
        /// When it began.
        package internal(set) var since: Duration
        /// What follows it.
        package internal(set) var then: AfterReconnect
        /// The link was lost (not a reset the upgrade sent).
        package internal(set) var afterLinkLoss: Bool
        /// Connection attempts made so far, the current one included.
        package internal(set) var attempts = 1
    }

    /// The reconnection in progress, as callers see it (an event per attempt).
    package var reconnecting: FirmwareUpgrade.Reconnecting? {
        guard case .reconnecting(let reconnection) = phase.active else { return nil }
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
        phase = .reconnecting(Reconnection(since: now, then: then, afterLinkLoss: afterLinkLoss))
        return .connect
    }

    /// With one slot, a device that stops answering may have found nothing it would boot (power
    /// lost mid-upload through the bootloader): MCUboot then halts unless built to fall back on
    /// its recovery. Said whether the reconnection timed out or the link failed until the retries
    /// ran out (which of the two comes first depends on the link: a serial port opens on a
    /// halted device).
    var haltedHint: String {
        MCUbootPlanner.Strategy(device.bootloaderMode) == .singleSlot || configuration.recovery
            || plan?.throughBootloader == true
            ? "; MCUboot may have found no valid image and halted: hold the recovery button while resetting the device, then run the upgrade with --recovery"
            : ""
    }

    mutating func reconnectTransition(_ input: Input, _ reconnection: Reconnection) -> Action? {
        switch input {
        case .connected:
            // SUIT devices may have no image list: the repeated action shows the link works.
            if case .repeat(let action, let execution) = reconnection.then { return repeating(action, execution) }
            return .readImageList
        case .imageList(let slots):
            lastSlots = slots
            return reconnected(slots, then: reconnection.then)
        case .linkFailed(let cause), .deviceRefused(let cause as any Error & Sendable):
            if now - reconnection.since >= configuration.reconnectTimeout {
                return .fail(
                    error(
                        .reconnectFailed,
                        "the device did not answer again within \(configuration.reconnectTimeout)\(haltedHint)",
                        cause
                    )
                )
            }
            return .wait(configuration.reconnectInterval)
        case .waited:
            var next = reconnection
            next.attempts += 1
            phase = .reconnecting(next)
            return .connect
        default:
            return nil
        }
    }

    /// The device answered again with its image list: go on as the reconnection said.
    private mutating func reconnected(_ slots: [ImageManagement.SlotState], then: AfterReconnect) -> Action {
        switch then {
        case .afterReset(let reset):
            // The retries are not renewed: the reset's step is done, but the budget is the one
            // the step after it had before the reset (as it always was).
            guard var next = reset.next else { return .succeed }
            guard case .verify = next.step else { return issue(next) }
            next.reboot = reset.reboot
            phase = .executing(next)
            return verify(slots, next)
        case .verify(let verifying):
            phase = .executing(verifying)
            return verify(slots, verifying)
        case .plan(let replacing):
            phase = .planning(replacing: replacing)
            return makePlan(slots: slots, replacing: replacing)
        case .enteredBootloader(let entering):
            guard MCUbootPlanner.applicationRuns(slots) else { return advance(entering) }
            // The application runs: the boot mode was lost (a power cut, the reset lost with
            // the link) — or the device does not enter its bootloader on request.
            return resetNotSeen(
                "the device reset and came back running its application: it does not stop in its bootloader on request (that needs Zephyr 4.2 or later with CONFIG_MCUMGR_GRP_OS_RESET_BOOT_MODE, and MCUboot with CONFIG_BOOT_SERIAL_BOOT_MODE or the firmware loader's boot mode). Hold its recovery button while resetting it, then run the upgrade with --recovery",
                code: .bootloaderNotEntered,
                resendOnce:
                    "the device came back running its application after the reset into its bootloader; resetting into it once more",
                entering
            )
        case .repeat(let action, let execution):
            return repeating(action, execution)
        }
    }

    /// Re-enters the state of a repeated action: the bootloader info before any plan, the SUIT
    /// step otherwise.
    private mutating func repeating(_ action: Action, _ execution: Execution?) -> Action {
        if case .readBootloaderInfo = action {
            phase = .readingBootloaderInfo
        } else if let execution {
            phase = .executing(execution)
        } else {
            return .fail(error(.unsupported, "internal: \(action) repeated without a step to repeat it in"))
        }
        return action
    }

    // MARK: - Rebooting

    /// After a reset (answered, or its answer lost): watch the device go away.
    mutating func watchReboot(answered: Bool, _ execution: Execution) -> Action {
        var watching = execution
        // A reset sent again (its first answer lost) keeps the count of attempts.
        watching.reboot = Reboot(since: now, answered: answered, attempts: execution.reboot?.attempts ?? 1)
        phase = .waitingForReboot(watching)
        return .probe
    }

    /// Waiting for the reboot (`swapping` false) or for the swap.
    mutating func rebootTransition(_ input: Input, _ execution: Execution, swapping: Bool) -> Action? {
        guard var watch = execution.reboot else { return nil }
        var execution = execution
        switch input {
        case .probeAnswered:
            watch.silentProbes = 0
            execution.reboot = watch
            phase = swapping ? .waitingForSwap(execution) : .waitingForReboot(execution)
            // Up all along: read the list once a reboot must have happened.
            if now - watch.since >= configuration.rebootTimeout { return readList(rebooted: false, execution) }
            return .wait(configuration.probeInterval)
        case .probeUnanswered:
            watch.silentProbes += 1
            let gone = watch.silentProbes >= (watch.answered ? 1 : 2)
            if gone { watch.sawGone = true }
            execution.reboot = watch
            phase = swapping ? .waitingForSwap(execution) : .waitingForReboot(execution)
            return gone ? readList(rebooted: true, execution) : .probe
        case .linkFailed:
            // The link dropped while probing: the device went away.
            watch.sawGone = true
            execution.reboot = watch
            return readList(rebooted: true, execution)
        case .waited:
            guard swapping else { return .probe }
            switch execution.step {
            case .revert: return reconnect(then: .plan(replacing: execution.replaced))
            case .verify: return reconnect(then: .verify(execution))
            case .enterBootloader: return reconnect(then: .enteredBootloader(execution))
            default: return reconnect(then: .afterReset(execution))
            }
        default:
            return nil
        }
    }

    /// Waits for the swap when the device rebooted (only bootloaders that copy images take
    /// time at boot), then reconnects.
    private mutating func readList(rebooted: Bool, _ execution: Execution) -> Action {
        phase = .waitingForSwap(execution)
        let strategy = MCUbootPlanner.Strategy(device.bootloaderMode)
        return .wait(rebooted && strategy.copiesAtBoot ? configuration.estimatedSwapTime : .zero)
    }

    /// After the reset the image is still pending, or nothing runs (the device is in its
    /// bootloader): watch on while it is too early to tell, then decide.
    mutating func stillPending(_ execution: Execution) -> Action {
        guard lastSlots.contains(where: \.isActive) else {
            return resetNotSeen(
                "the device reset and came back in its bootloader, running nothing: MCUboot did not start the application (it found no image it would boot, or the recovery button is held). The device was reset \(Self.resetsSent(execution)) and is left as it is",
                code: .imageNotActive,
                execution
            )
        }
        let pending = pendingDescription()
        // A reset whose answer was lost proves nothing by the link dropping after it: the link
        // may have dropped first and taken the reset with it. A pending image on a device running
        // its old one only gains from another reset, so that case gets one more.
        return resetNotSeen(
            "the device reset and came back with \(pending) still pending: the bootloader did not swap. Likely causes: no MCUboot under the application, an unsigned image or one signed with a key MCUboot does not trust, or a downgrade MCUboot refused. The device was reset \(Self.resetsSent(execution)) and is left as it is",
            code: .notSwapped,
            resendOnce: execution.reboot?.answered == false
                ? "the image is still pending after a reset whose answer was lost (the link may have dropped before the reset arrived); resetting once more"
                : nil,
            execution
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
    ///   - execution: the plan and step, with the reboot watched.
    mutating func resetNotSeen(
        _ message: String,
        code: FirmwareUpgradeError.Code,
        resendOnce warning: String? = nil,
        _ execution: Execution
    ) -> Action {
        guard var watch = execution.reboot else {
            return .fail(error(code, "\(message) (no reset was watched)"))
        }
        if now - watch.since < configuration.rebootTimeout {
            var watching = execution
            watch.silentProbes = 0
            watching.reboot = watch
            phase = .waitingForReboot(watching)
            return .probe
        }
        // Seen resetting: final, unless this case gets one more reset. Not seen: the reset never
        // arrived, and is sent again like any lost request the state still needs.
        let seen = watch.answered || watch.sawGone
        let resend = seen && watch.attempts < 2 ? warning : nil
        if seen && resend == nil {
            let unseen =
                watch.sawGone
                ? "" : " (it was never seen going away; if it did not reset at all, something on it blocked the reset)"
            return .fail(error(code, message + unseen))
        }
        guard watch.attempts <= max(1, configuration.retries) else {
            return .fail(error(.resetFailed, "the device did not reset after \(watch.attempts) resets"))
        }
        watch.attempts += 1
        warnings.append(
            resend ?? "the device did not reset (its answer was lost and it kept answering); resetting once more"
        )
        // The same reset again: its step, with the reboot's count of attempts.
        guard var reset = execution.reset else { return unexpected(.imageList(lastSlots)) }
        reset.reboot = watch
        return issue(reset)
    }

    /// How many resets were sent for this step, in words.
    private static func resetsSent(_ execution: Execution) -> String {
        switch execution.reboot?.attempts ?? 1 {
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
