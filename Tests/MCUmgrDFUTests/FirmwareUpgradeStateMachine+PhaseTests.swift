import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPLink
import Testing

/// What each state of the upgrade machine holds: the data of a state is there in it and gone
/// outside it, a reboot spans the states after its reset, a reconnection returns to the state it
/// left with that state's data, and a pause gives back exactly the state it held.
@Suite struct FirmwareUpgradeStateMachinePhaseTests {
    typealias Tests = FirmwareUpgradeStateMachineTests
    typealias Machine = FirmwareUpgradeStateMachine
    typealias Input = Machine.Input
    typealias Action = Machine.Action
    /// An input, its time, and what the machine holds after it.
    typealias Line = (input: Input, at: Duration, holds: String)

    // MARK: - Describing a phase

    static func kind(_ step: FirmwareUpgradePlan.Step) -> String {
        switch step {
        case .revert: "revert"
        case .enterBootloader: "enter bootloader"
        case .upload: "upload"
        case .eraseAppSettings: "erase"
        case .test: "test"
        case .confirm: "confirm"
        case .reset: "reset"
        case .verify: "verify"
        case .suitUploadEnvelope: "envelope"
        case .suitUploadCache: "cache"
        case .suitProcess: "process"
        case .suitInstall: "install"
        }
    }

    /// The step, and the reboot and install start when the execution holds them.
    static func describe(_ execution: Machine.Execution?) -> String {
        guard let execution else { return "no plan" }
        var text = "\(execution.stepIndex) \(kind(execution.step))"
        if let reboot = execution.reboot {
            text += ", reboot since \(reboot.since) \(reboot.answered ? "answered" : "unanswered")"
            text += ", \(reboot.silentProbes) silent\(reboot.sawGone ? ", gone" : ""), ×\(reboot.attempts)"
        }
        if let start = execution.installStart { text += ", installing since \(start)" }
        return text
    }

    static func describe(_ then: Machine.AfterReconnect) -> String {
        switch then {
        case .afterReset(let execution): "after reset \(describe(execution))"
        case .verify(let execution): "verify \(describe(execution))"
        case .plan(let replacing): "plan replacing \(describe(replacing))"
        case .enteredBootloader(let execution): "entered bootloader \(describe(execution))"
        case .repeat(let action, let execution): "repeat \(action) in \(describe(execution))"
        }
    }

    static func describe(_ phase: Machine.Phase) -> String {
        switch phase {
        case .idle: "idle"
        case .requestingParameters: "requesting parameters"
        case .readingBootloaderInfo: "reading bootloader info"
        case .planning(let replacing): "planning, replacing \(describe(replacing))"
        case .executing(let execution): "executing \(describe(execution))"
        case .waitingForReboot(let execution): "waiting for reboot \(describe(execution))"
        case .waitingForSwap(let execution): "waiting for swap \(describe(execution))"
        case .reconnecting(let reconnection):
            "reconnecting #\(reconnection.attempts), then \(describe(reconnection.then))"
        case .paused(let held): "paused in \(describe(held))"
        case .ended(let ending): "ended \(ending)"
        }
    }

    /// Feeds inputs, checking what the machine holds after each.
    static func run(_ machine: inout Machine, _ script: [Line], sourceLocation: SourceLocation = #_sourceLocation) {
        for (index, line) in script.enumerated() {
            _ = machine.handle(line.input, at: line.at)
            #expect(
                describe(machine.phase) == line.holds,
                "line \(index): \(line.input)",
                sourceLocation: sourceLocation
            )
        }
    }

    static let contact: [Line] = [
        (.start, .zero, "requesting parameters"),
        (.connected, .zero, "requesting parameters"),
        (.parametersRead, .zero, "reading bootloader info"),
        (.bootloaderName("MCUboot"), .zero, "reading bootloader info"),
        (.bootloaderMode(.swapUsingMove, noDowngrade: false), .zero, "planning, replacing no plan"),
        (.imageList([Tests.factory]), .zero, "planning, replacing no plan"),
        (.slotInfo([]), .zero, "executing 0 upload"),
    ]

    // MARK: - Tables

    /// Test, then reset: the reboot appears with the reset's answer and goes through waiting for
    /// the swap into reconnecting (the start of both tables below).
    static let throughTheReset: [Line] =
        contact + [
            (.done, .zero, "executing 1 test"),
            (.stateWritten(Tests.pendingB), .zero, "executing 2 reset"),
            (.done, .seconds(1), "waiting for reboot 2 reset, reboot since 1.0 seconds answered, 0 silent, ×1"),
            (
                .probeUnanswered, .seconds(2),
                "waiting for swap 2 reset, reboot since 1.0 seconds answered, 1 silent, gone, ×1"
            ),
            (
                .waited, .seconds(5),
                "reconnecting #1, then after reset 2 reset, reboot since 1.0 seconds answered, 1 silent, gone, ×1"
            ),
            (
                .connected, .seconds(5),
                "reconnecting #1, then after reset 2 reset, reboot since 1.0 seconds answered, 1 silent, gone, ×1"
            ),
        ]

    /// Test-only: the reboot appears with the reset's answer, goes through waiting for the swap and
    /// reconnecting into the verify step after the reset — where a list read too early sends the
    /// machine back to watching the same reboot (since 1 s, not since the list) — and ends with
    /// the run.
    static let testOnly: [Line] =
        throughTheReset + [
            (
                .imageList(Tests.pendingB), .seconds(5),
                "waiting for reboot 3 verify, reboot since 1.0 seconds answered, 0 silent, gone, ×1"
            ),
            (
                .probeUnanswered, .seconds(6),
                "waiting for swap 3 verify, reboot since 1.0 seconds answered, 1 silent, gone, ×1"
            ),
            (
                .waited, .seconds(9),
                "reconnecting #1, then verify 3 verify, reboot since 1.0 seconds answered, 1 silent, gone, ×1"
            ),
            (
                .connected, .seconds(9),
                "reconnecting #1, then verify 3 verify, reboot since 1.0 seconds answered, 1 silent, gone, ×1"
            ),
            (.imageList(Tests.runningB), .seconds(9), "ended succeeded"),
        ]

    @Test func aRebootSpansTheStatesAfterItsResetUpToTheVerdict() {
        var machine = Tests.machine(.testOnly)
        Self.run(&machine, Self.testOnly)
        #expect(machine.currentStep == nil)
        #expect(machine.plan?.steps.count == 4)
    }

    /// Test and confirm: the list after the reset passes the verify step at once, and the confirm
    /// after it holds no reboot; a link failure while confirming plans again, replacing the
    /// confirm step, with nothing of the step carried.
    @Test func aRebootEndsWithTheStepAfterItsReset() {
        var machine = Tests.machine()
        let timeout = Input.linkFailed(SMPTransportError(.timeout))
        Self.run(
            &machine,
            Self.throughTheReset + [
                (.imageList(Tests.runningB), .seconds(5), "executing 4 confirm"),
                (timeout, .seconds(6), "reconnecting #1, then plan replacing 4 confirm"),
                (timeout, .seconds(6), "reconnecting #1, then plan replacing 4 confirm"),
                (.waited, .seconds(6), "reconnecting #2, then plan replacing 4 confirm"),
                (.connected, .seconds(6), "reconnecting #2, then plan replacing 4 confirm"),
                // Planned again from the list: the confirm is the first step now.
                (.imageList(Tests.runningB), .seconds(6), "executing 0 confirm"),
            ]
        )
    }

    /// A reset whose answer was lost on a device that kept answering is sent again: the reset's
    /// step with the reboot's count of attempts, which the next watch keeps.
    @Test func aResetSentAgainKeepsTheCountOfAttempts() {
        var machine = Tests.machine(.testOnly)
        let lost = Input.outcomeUnknown(SMPTransportError(.outcomeUnknown))
        Self.run(
            &machine,
            Self.contact + [
                (.done, .zero, "executing 1 test"),
                (.stateWritten(Tests.pendingB), .zero, "executing 2 reset"),
                (lost, .seconds(1), "waiting for reboot 2 reset, reboot since 1.0 seconds unanswered, 0 silent, ×1"),
                (
                    .probeAnswered, .seconds(6),
                    "waiting for swap 2 reset, reboot since 1.0 seconds unanswered, 0 silent, ×1"
                ),
                (
                    .waited, .seconds(6),
                    "reconnecting #1, then after reset 2 reset, reboot since 1.0 seconds unanswered, 0 silent, ×1"
                ),
                (
                    .connected, .seconds(6),
                    "reconnecting #1, then after reset 2 reset, reboot since 1.0 seconds unanswered, 0 silent, ×1"
                ),
                (
                    .imageList(Tests.pendingB), .seconds(6),
                    "executing 2 reset, reboot since 1.0 seconds unanswered, 0 silent, ×2"
                ),
                (.done, .seconds(7), "waiting for reboot 2 reset, reboot since 7.0 seconds answered, 0 silent, ×2"),
            ]
        )
    }

    /// A revert frees the slot, then the machine plans again: the revert step it replaces is kept
    /// without its reboot, and the new plan starts afresh.
    @Test func planningAgainAfterARevertCarriesNoReboot() {
        var machine = Tests.machine(revertPending: true)
        let busy = [Slots.entry(nil, 0, Slots.c, "a"), Slots.entry(nil, 1, Slots.a, "c")]
        Self.run(
            &machine,
            Array(Self.contact.prefix(5)) + [
                (.imageList(busy), .zero, "executing 0 revert"),
                (.done, .seconds(1), "waiting for reboot 0 revert, reboot since 1.0 seconds answered, 0 silent, ×1"),
                (
                    .probeUnanswered, .seconds(2),
                    "waiting for swap 0 revert, reboot since 1.0 seconds answered, 1 silent, gone, ×1"
                ),
                (.waited, .seconds(5), "reconnecting #1, then plan replacing 0 revert"),
                (.connected, .seconds(5), "reconnecting #1, then plan replacing 0 revert"),
                (
                    .imageList([Tests.factory, Slots.entry(nil, 1, Slots.c)]), .seconds(5),
                    "planning, replacing 0 revert"
                ),
                (.slotInfo([]), .seconds(5), "executing 0 upload"),
            ]
        )
        #expect(machine.resetsBeforeUpload == 1)
    }

    /// The bootloader's mode asked again after a reconnection: the name read before it is kept
    /// and the same query repeated.
    @Test func theBootloaderInfoIsAskedAgainWithWhatWasRead() {
        var machine = Tests.machine(retries: 1)
        let timeout = Input.linkFailed(SMPTransportError(.timeout))
        Self.run(
            &machine,
            Array(Self.contact.prefix(4)) + [
                (
                    timeout, .zero,
                    "reconnecting #1, then repeat readBootloaderInfo(query: Optional(\"mode\")) in no plan"
                )
            ]
        )
        #expect(machine.handle(.connected) == .readBootloaderInfo(query: "mode"))
        #expect(Self.describe(machine.phase) == "reading bootloader info")
        #expect(machine.device.bootloaderName == "MCUboot")
    }

    /// SUIT: a poll lost on the link is repeated after reconnecting, in the install step with the
    /// time it began: the install deadline still runs from there (30 s after 1 s).
    @Test func theInstallDeadlineRunsAcrossAReconnection() {
        var machine = Tests.suitMachine()
        let timeout = Input.linkFailed(SMPTransportError(.timeout))
        Self.run(
            &machine,
            Array(Self.contact.prefix(3)) + [
                (.bootloaderName("SUIT"), .zero, "executing 0 envelope"),
                (.done, .seconds(1), "executing 1 install, installing since 1.0 seconds"),
                (
                    timeout, .seconds(2),
                    "reconnecting #1, then repeat pollSUIT in 1 install, installing since 1.0 seconds"
                ),
                (.connected, .seconds(3), "executing 1 install, installing since 1.0 seconds"),
                (.suitNothingRequested, .seconds(3), "executing 1 install, installing since 1.0 seconds"),
            ]
        )
        let error = Tests.failure(&machine, .suitManifests([]), at: .seconds(31))
        #expect(error?.code == .suitNotInstalled)
    }

    /// Paused in any state of a run, the machine holds that state with its data, takes no input,
    /// does not pause twice, and gives the state back exactly on resume, with the action that was
    /// in flight; the states shown do not change.
    @Test func pauseAndResumeGiveBackTheExactState() {
        var machine = Tests.machine(.testOnly)
        var inFlight: Action?
        for line in Self.testOnly.dropLast() {
            var paused = machine
            let held = machine.phase
            #expect(paused.handle(.pause) == .waitForResume)
            #expect(paused.phase == .paused(held))
            #expect(paused.state == machine.state)
            #expect(paused.reconnecting == machine.reconnecting)
            #expect(paused.handle(line.input) == .waitForResume)
            #expect(paused.handle(.pause) == .waitForResume)
            #expect(paused.phase == .paused(held))
            #expect(paused.handle(.resume) == inFlight ?? .connect)
            #expect(paused.phase == held)
            #expect(paused.visited == machine.visited)
            #expect(!paused.isPaused)
            inFlight = machine.handle(line.input, at: line.at)
        }
    }
}
