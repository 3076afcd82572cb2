import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPLink
import Testing

@Suite struct FirmwareUpgradeStateMachineTests {
    typealias Machine = FirmwareUpgradeStateMachine
    typealias Input = FirmwareUpgradeStateMachine.Input
    typealias Action = FirmwareUpgradeStateMachine.Action
    typealias Line = (input: Input, at: Duration, action: Action, state: FirmwareUpgrade.State)

    static let b = Slots.hash(Slots.b)
    static let factory = Slots.entry(nil, 0, Slots.a, "ac")
    static let pendingB = [factory, Slots.entry(nil, 1, Slots.b, "p")]
    static let runningB = [Slots.entry(nil, 0, Slots.b, "a"), Slots.entry(nil, 1, Slots.a, "c")]
    static let upload = Action.upload(imageIndex: 0, packageIndex: 0)
    static let timeout = Input.linkFailed(SMPTransportError(.timeout))

    static func machine(
        _ mode: FirmwareUpgrade.Mode = .testAndConfirm,
        retries: Int = 2,
        images: [FirmwarePackage.Image] = [Slots.image(Slots.b)],
        revertPending: Bool = false
    ) -> Machine {
        Machine(
            configuration: .init(
                mode: mode,
                estimatedSwapTime: .seconds(3),
                retries: retries,
                revertPending: revertPending
            ),
            payload: .mcuboot(images)
        )
    }

    /// Feeds inputs, checking each answer and the state after it.
    static func run(_ machine: inout Machine, _ script: [Line], sourceLocation: SourceLocation = #_sourceLocation) {
        for (index, line) in script.enumerated() {
            let action = machine.handle(line.input, at: line.at)
            #expect(action == line.action, "line \(index): \(line.input)", sourceLocation: sourceLocation)
            #expect(machine.state == line.state, "line \(index): \(line.input)", sourceLocation: sourceLocation)
        }
    }

    /// The failure the next input ends with.
    static func failure(_ machine: inout Machine, _ input: Input, at time: Duration = .zero) -> FirmwareUpgradeError? {
        let action = machine.handle(input, at: time)
        guard case .fail(let error) = action else {
            Issue.record("expected a failure, got \(action)")
            return nil
        }
        return error
    }

    /// Connecting and the probes, up to the image list.
    static let probes: [Line] = [
        (.start, .zero, .connect, .requestingParameters),
        (.connected, .zero, .readParameters, .requestingParameters),
        (.parametersRead, .zero, .readBootloaderInfo(query: nil), .readingBootloaderInfo),
        (.bootloaderName("MCUboot"), .zero, .readBootloaderInfo(query: "mode"), .readingBootloaderInfo),
        (.bootloaderMode(.swapUsingMove, noDowngrade: false), .zero, .readImageList, .validating),
    ]

    /// A reset the device answers, then goes away from and comes back after, at `t` seconds.
    static func reboot(
        at t: Int,
        list: [ImageManagement.SlotState],
        then action: Action,
        _ state: FirmwareUpgrade.State
    )
        -> [Line]
    {
        [
            (.done, .seconds(t), .probe, .waitingForReboot),
            (.probeAnswered, .seconds(t), .wait(.milliseconds(100)), .waitingForReboot),
            (.waited, .seconds(t), .probe, .waitingForReboot),
            (.probeUnanswered, .seconds(t + 1), .wait(.seconds(3)), .waitingForSwap),
            (.waited, .seconds(t + 4), .connect, .reconnecting),
            (.connected, .seconds(t + 4), .readImageList, .reconnecting),
            (.imageList(list), .seconds(t + 4), action, state),
        ]
    }

    /// The device kept answering past the reboot timeout: the list is read again at `t`.
    static func listReadAgain(at t: Int) -> [Line] {
        [
            (.probeAnswered, .seconds(t), .wait(.zero), .waitingForSwap),
            (.waited, .seconds(t), .connect, .reconnecting),
            (.connected, .seconds(t), .readImageList, .reconnecting),
        ]
    }

    /// Runs `script` as `run` does, and counts the resets the machine sent.
    static func resetsSent(_ machine: inout Machine, _ script: [Line]) -> Int {
        var resets = 0
        for line in script {
            let action = machine.handle(line.input, at: line.at)
            if case .reset = action { resets += 1 }
            #expect(action == line.action, "\(line.input)")
        }
        return resets
    }

    @Test func testAndConfirmRunsTheWholeLifecycle() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
                (.stateWritten(Self.pendingB), .zero, .reset(force: false), .resetting),
            ]
                + Self.reboot(
                    at: 1,
                    list: Self.runningB,
                    then: .writeImageState(hash: Self.b, confirm: true),
                    .confirming
                )
                + [
                    (.stateWritten([Slots.entry(nil, 0, Slots.b, "ac")]), .seconds(6), .readImageList, .verifying),
                    (
                        .imageList([Slots.entry(nil, 0, Slots.b, "ac"), Slots.entry(nil, 1, Slots.a)]), .seconds(6),
                        .succeed, .succeeded
                    ),
                ]
        )
        #expect(machine.initialSlots == [Self.factory])
        #expect(machine.isFinished)
    }

    @Test func anUpToDateDeviceSucceedsWithoutCommands() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [(.imageList([Slots.entry(nil, 0, Slots.b, "ac")]), .zero, .succeed, .succeeded)]
        )
        #expect(machine.plan?.isUpToDate == true)
    }

    /// The first contact decides: no answer to the parameters (or no connection) ends the run at
    /// once, with the link failure as the cause; no retries, no reconnection loop.
    @Test(arguments: [
        Input.linkFailed(SMPTransportError(.timeout)), .linkFailed(SMPTransportError(.connectionRefused)),
    ])
    func aDeviceThatDoesNotAnswerFailsAtOnce(_ silence: Input) {
        var machine = Self.machine()
        Self.run(&machine, Array(Self.probes.prefix(2)))
        let error = Self.failure(&machine, silence)
        #expect(error?.code == .linkFailed)
        #expect(error?.state == .requestingParameters)
        var unreachable = Self.machine()
        Self.run(&unreachable, Array(Self.probes.prefix(1)))
        #expect(Self.failure(&unreachable, silence)?.code == .linkFailed)
    }

    /// Bootloader info the device refuses: plan without it (a warning says so). No answer, once
    /// the device answered the parameters, is the link and not the device: reconnect and ask
    /// again (the mode decides the plan); plan without it only when the retries are spent.
    /// The slot sizes are read once, before the first upload; a device without them goes on.
    /// A refusal of the upload is said once: it is the error's cause, not also in its message.
    @Test func slotSizesAreReadBeforeTheFirstUploadAndARefusalIsSaidOnce() {
        var machine = Self.machine()
        let notSupported = SMPDeviceError(.management(.notSupported), requestGroup: .image, command: 6)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.deviceRefused(notSupported), .zero, Self.upload, .uploading),
            ]
        )
        #expect(machine.device.slotCapacities == [])
        let tooLarge = SMPDeviceError(.group(.image, 30), requestGroup: .image, command: 1)
        let error = Self.failure(&machine, .deviceRefused(tooLarge))
        #expect(error?.code == .deviceRejected)
        let text = error.map { "\($0)" } ?? ""
        #expect(
            text
                == "upgrade failed while uploading: the device refused upload image 0 (image error 30 INVALID_IMAGE_TOO_LARGE)"
        )
    }

    @Test func missingBootloaderInfoIsAssumedAndSaid() {
        let notSupported = SMPDeviceError(.management(.notSupported), requestGroup: .os, command: 8)
        var refused = Self.machine()
        Self.run(
            &refused,
            Array(Self.probes.prefix(3)) + [(.deviceRefused(notSupported), .zero, .readImageList, .validating)]
        )
        #expect(refused.bootloaderMode == nil)
        _ = refused.handle(.imageList([Self.factory]))
        _ = refused.handle(.slotInfo([]))
        #expect(refused.warnings.contains { $0.contains("assuming") })

        var silent = Self.machine(retries: 1)
        Self.run(
            &silent,
            Array(Self.probes.prefix(3)) + [
                (Self.timeout, .zero, .connect, .reconnecting),
                (.connected, .zero, .readBootloaderInfo(query: nil), .readingBootloaderInfo),
                (Self.timeout, .zero, .readImageList, .validating),
            ]
        )
        #expect(silent.bootloaderMode == nil)
        _ = silent.handle(.imageList([Self.factory]))
        _ = silent.handle(.slotInfo([]))
        #expect(silent.warnings.contains { $0.contains("did not answer bootloader info") })
    }

    /// The first request unanswered fails at once; the message tells a refused port (nothing
    /// listens) from a silent device, for readers of the message alone.
    @Test(arguments: [
        (SMPTransportError(.timeout), "the device does not answer"),
        (
            SMPTransportError(.connectionRefused, "nothing listens at udp://127.0.0.1:9"),
            "the device refused the connection"
        ),
    ])
    func aDeviceThatNeverAnsweredFailsAtOnceSayingHow(cause: SMPTransportError, message: String) throws {
        var machine = Self.machine()
        #expect(machine.handle(.start, at: .zero) == .connect)
        #expect(machine.handle(.connected, at: .zero) == .readParameters)
        let error = try #require(Self.failure(&machine, .linkFailed(cause)))
        #expect(error.code == .linkFailed)
        #expect(error.state == .requestingParameters)
        #expect(error.message == message)
    }

    @Test func aLinkFailureReconnectsAndRepeatsTheStepUntilTheRetriesRunOut() {
        var machine = Self.machine(retries: 1)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (Self.timeout, .zero, .connect, .reconnecting),
                (.connected, .zero, .readImageList, .reconnecting),
                // The slot sizes are read once, before the first upload.
                (.imageList([Self.factory]), .zero, Self.upload, .uploading),
            ]
        )
        let error = Self.failure(&machine, Self.timeout)
        #expect(error?.code == .linkFailed)
        #expect(error?.state == .uploading)
    }

    /// A settings erase whose answer is lost is not sent again: a warning says it may not have
    /// happened, and the upgrade goes on.
    @Test func aLostEraseAnswerIsReportedNotRepeated() {
        var machine = Machine(
            configuration: .init(mode: .confirmOnly, eraseAppSettings: true),
            payload: .mcuboot([Slots.image(Slots.b)])
        )
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .eraseAppSettings, .erasingAppSettings),
                (
                    .outcomeUnknown(SMPTransportError(.outcomeUnknown)), .zero,
                    .writeImageState(hash: Self.b, confirm: true), .confirming
                ),
            ]
        )
        #expect(machine.warnings.contains { $0.contains("settings erase was lost") })
    }

    @Test func aResetRefusedAsBusyIsForcedOnce() {
        var machine = Self.machine(.confirmOnly)
        let busy = SMPDeviceError(.management(.busy), requestGroup: .os, command: 5)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: true), .confirming),
                (
                    .stateWritten([Self.factory, Slots.entry(nil, 1, Slots.b, "pP")]), .zero, .reset(force: false),
                    .resetting
                ),
                (.deviceRefused(busy), .zero, .reset(force: true), .resetting),
            ]
        )
        #expect(Self.failure(&machine, .deviceRefused(busy))?.code == .deviceRejected)
    }

    /// A reset whose answer was lost, followed by the device going away, is a reset that
    /// happened: nothing is sent twice.
    @Test func aLostResetAnswerFollowedByTheDeviceGoingAwayIsAReset() {
        var machine = Self.machine(.confirmOnly)
        let confirmedB = [Slots.entry(nil, 0, Slots.b, "ac"), Slots.entry(nil, 1, Slots.a)]
        var script: [Line] =
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: true), .confirming),
                (
                    .stateWritten([Self.factory, Slots.entry(nil, 1, Slots.b, "pP")]), .zero, .reset(force: false),
                    .resetting
                ),
                (.outcomeUnknown(SMPTransportError(.outcomeUnknown)), .seconds(1), .probe, .waitingForReboot),
                // One unanswered probe may be a lost datagram: only two in a row show it gone.
                (.probeUnanswered, .seconds(2), .probe, .waitingForReboot),
            ]
        script += Self.reboot(at: 1, list: confirmedB, then: .succeed, .succeeded).dropFirst(3)
        Self.run(&machine, script)
        #expect(machine.warnings.contains { $0.contains("answer to the reset was lost") })
    }

    /// The reset's answer was lost and the device kept answering well past any reset delay: the
    /// reset never arrived, and the state still needs it, so it is sent once more.
    @Test func aLostResetOnADeviceThatNeverWentAwayIsSentOnceMore() {
        var machine = Self.machine(.testOnly)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
                (.stateWritten(Self.pendingB), .zero, .reset(force: false), .resetting),
                (.outcomeUnknown(SMPTransportError(.outcomeUnknown)), .seconds(1), .probe, .waitingForReboot),
                (.probeAnswered, .seconds(6), .wait(.zero), .waitingForSwap),
                (.waited, .seconds(6), .connect, .reconnecting),
                (.connected, .seconds(6), .readImageList, .reconnecting),
                (.imageList(Self.pendingB), .seconds(6), .reset(force: false), .resetting),
            ] + Self.reboot(at: 7, list: Self.runningB, then: .succeed, .succeeded)
        )
    }

    /// A confirm by hash whose answer is lost is not sent again by the client; the machine
    /// reconnects and plans from the list, which shows whether it arrived and whether the image
    /// still runs (a watchdog reset during the test reverts it).
    @Test func aConfirmWhoseAnswerIsLostIsPlannedAgainFromTheList() {
        var machine = Self.machine(.confirmOnly)
        let confirmedB = [Slots.entry(nil, 0, Slots.b, "ac"), Slots.entry(nil, 1, Slots.a)]
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: true), .confirming),
                (.outcomeUnknown(SMPTransportError(.outcomeUnknown)), .zero, .connect, .reconnecting),
                (.connected, .zero, .readImageList, .reconnecting),
            ]
        )
        // Planned again from a list where the confirm arrived and the device reset: nothing left.
        #expect(machine.handle(.imageList(confirmedB), at: .zero) == .succeed)
    }

    /// A reset that a closed connection refused never left: it is not an unknown outcome to watch
    /// for a reboot that cannot come (which ended in "the bootloader reverted it"), but a link
    /// failure: reconnect, plan again from the list, and reset once, on the new connection.
    @Test func aResetTheClosedConnectionRefusedIsSentOnTheNextConnection() {
        var machine = Self.machine(.testOnly)
        let refused = Input.linkFailed(SMPTransportError.closed("the UDP socket is closed"))
        let resets = Self.resetsSent(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
                (.stateWritten(Self.pendingB), .zero, .reset(force: false), .resetting),
                (refused, .zero, .connect, .reconnecting),
                (.connected, .zero, .readImageList, .reconnecting),
                (.imageList(Self.pendingB), .zero, .reset(force: false), .resetting),
            ] + Self.reboot(at: 1, list: Self.runningB, then: .succeed, .succeeded)
        )
        // The refused one, and the one the device gets.
        #expect(resets == 2)
        #expect(!machine.warnings.contains { $0.contains("answer to the reset was lost") })
    }

    /// The reset's answer was lost and then the link dropped: the drop may have come first and
    /// taken the reset with it. The image still pending past the reboot timeout gets one more
    /// reset (harmless on a device running its old image with an update pending), with a warning.
    @Test func aLostResetAnswerAndADroppedLinkGetOneMoreResetWhenTheImageIsStillPending() {
        var machine = Self.machine(.testOnly)
        let dropped = Input.linkFailed(SMPTransportError(.disconnected))
        Self.run(
            &machine,
            Self.lostResetThenDroppedLink(dropped) + Self.reboot(at: 8, list: Self.runningB, then: .succeed, .succeeded)
        )
        #expect(machine.warnings.contains { $0.contains("still pending after a reset whose answer was lost") })
    }

    /// The same, and the image is still pending after the second reset too: final, after exactly
    /// two resets, saying so.
    @Test func aSecondResetThatLeavesTheImagePendingIsFinal() {
        var machine = Self.machine(.testOnly)
        let dropped = Input.linkFailed(SMPTransportError(.disconnected))
        let resets = Self.resetsSent(
            &machine,
            Self.lostResetThenDroppedLink(dropped)
                + Self.reboot(at: 8, list: Self.pendingB, then: .probe, .waitingForReboot) + Self.listReadAgain(at: 14)
        )
        let error = Self.failure(&machine, .imageList(Self.pendingB), at: .seconds(14))
        #expect(error?.code == .notSwapped)
        #expect(error?.message.contains("reset twice") == true)
        #expect(resets == 2)
    }

    /// Test-only up to a reset whose answer is lost, the link dropping while the device is
    /// probed, and the image still pending past the reboot timeout: the machine resets again.
    static func lostResetThenDroppedLink(_ dropped: Input) -> [Line] {
        Self.probes + [
            (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
            (.slotInfo([]), .zero, Self.upload, .uploading),
            (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
            (.stateWritten(Self.pendingB), .zero, .reset(force: false), .resetting),
            (.outcomeUnknown(SMPTransportError(.outcomeUnknown)), .seconds(1), .probe, .waitingForReboot),
            (dropped, .seconds(1), .wait(.seconds(3)), .waitingForSwap),
            (.waited, .seconds(4), .connect, .reconnecting),
            (.connected, .seconds(4), .readImageList, .reconnecting),
            // Too early to tell: watched on until the reboot timeout.
            (.imageList(Self.pendingB), .seconds(4), .probe, .waitingForReboot),
        ] + Self.listReadAgain(at: 7) + [(.imageList(Self.pendingB), .seconds(7), .reset(force: false), .resetting)]
    }

    /// The device reset (it went away and came back) yet the image is still pending: the
    /// bootloader did not swap. It is watched once more (it may not have rebooted yet when the
    /// list was read), then the run fails with the likely causes — after exactly one reset.
    @Test func anImageStillPendingAfterARebootFailsAfterOneReset() {
        var machine = Self.machine(.testOnly)
        let script: [Line] =
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
                (.stateWritten(Self.pendingB), .zero, .reset(force: false), .resetting),
            ] + Self.reboot(at: 1, list: Self.pendingB, then: .probe, .waitingForReboot) + Self.listReadAgain(at: 11)
        let resets = Self.resetsSent(&machine, script)
        let error = Self.failure(&machine, .imageList(Self.pendingB), at: .seconds(11))
        #expect(error?.code == .notSwapped)
        #expect(error?.code.category == .outcome)
        #expect(error?.message.contains("2.0.0") == true)
        #expect(error?.message.contains("no MCUboot") == true)
        #expect(error?.message.contains("signed") == true)
        #expect(error?.message.contains("downgrade") == true)
        #expect(resets == 1)
    }

    /// A lost probe answer before the reboot looks like the device going away; the list read then
    /// still shows the image pending. Too early to tell: the machine watches on, sees the reboot,
    /// and the next list shows the image running.
    @Test func aListReadBeforeTheRebootIsNotTheVerdict() {
        var machine = Self.machine(.testOnly)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
                (.stateWritten(Self.pendingB), .zero, .reset(force: false), .resetting),
            ] + Self.reboot(at: 1, list: Self.pendingB, then: .probe, .waitingForReboot)
                + Self.reboot(at: 5, list: Self.runningB, then: .succeed, .succeeded).dropFirst()
        )
    }

    /// A device that answered the reset reboots (Zephyr does, within its reset delay), even when
    /// it was never seen going away: a pending image after the reboot timeout is not swapped, and
    /// the message says it was never seen going away. It is not reset again.
    @Test func aDeviceThatAcceptedTheResetButNeverWentAwayFails() {
        var machine = Self.machine(.testOnly)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
                (.stateWritten(Self.pendingB), .zero, .reset(force: false), .resetting),
                (.done, .seconds(1), .probe, .waitingForReboot),
                (.probeAnswered, .seconds(7), .wait(.zero), .waitingForSwap),
                (.waited, .seconds(7), .connect, .reconnecting),
                (.connected, .seconds(7), .readImageList, .reconnecting),
            ]
        )
        let error = Self.failure(&machine, .imageList(Self.pendingB), at: .seconds(7))
        #expect(error?.code == .notSwapped)
        #expect(error?.message.contains("never seen going away") == true)
    }

    @Test func aRevertAfterResetIsAClearFailure() {
        var machine = Self.machine(.testOnly)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
                (.stateWritten(Self.pendingB), .zero, .reset(force: false), .resetting),
            ] + Self.reboot(at: 1, list: Self.pendingB, then: .probe, .waitingForReboot).dropLast()
        )
        // Read before the reboot must have happened (a lost probe looks like the device going
        // away): watched on, then final.
        let reverted = [Self.factory, Slots.entry(nil, 1, Slots.b)]
        Self.run(
            &machine,
            [
                (.imageList(reverted), .seconds(5), .probe, .waitingForReboot),
                (.probeAnswered, .seconds(7), .wait(.zero), .waitingForSwap),
                (.waited, .seconds(7), .connect, .reconnecting),
                (.connected, .seconds(7), .readImageList, .reconnecting),
            ]
        )
        let error = Self.failure(&machine, .imageList(reverted), at: .seconds(7))
        #expect(error?.code == .imageNotActive)
        #expect(error?.state == .verifying)
    }

    @Test func aTestTheDeviceDoesNotMarkFails() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
            ]
        )
        let error = Self.failure(&machine, .stateWritten([Self.factory, Slots.entry(nil, 1, Slots.b)]))
        #expect(error?.code == .imageNotMarked)
        #expect(error?.state == .testing)
    }

    @Test func aDeviceRefusalFailsInItsState() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
            ]
        )
        let refusal = SMPDeviceError(.group(.image, 9), requestGroup: .image, command: 1)
        let error = Self.failure(&machine, .deviceRefused(refusal))
        #expect(error?.code == .deviceRejected)
        #expect(error?.state == .uploading)
        #expect(error?.cause is SMPDeviceError)
    }

    /// A confirm refused because the hash is gone (the bootloader erased the image after a power
    /// loss) says the image is missing: an outcome, not a refusal.
    @Test func aConfirmOfAnErasedImageSaysItIsMissing() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
            ]
        )
        let gone = SMPDeviceError(.group(.image, 8), requestGroup: .image, command: 0)
        let error = Self.failure(&machine, .deviceRefused(gone))
        #expect(error?.code == .imageMissingAfterReset)
        #expect(error?.code.category == .outcome)
    }

    /// With no-downgrade reported, an older image is refused before anything is uploaded.
    @Test func anOlderImageOnADeviceThatRefusesDowngradesFailsBeforeUploading() {
        var machine = Self.machine(images: [Slots.image(Slots.b, version: "0.9.0")])
        Self.run(&machine, Array(Self.probes.prefix(4)))
        #expect(machine.handle(.bootloaderMode(.swapUsingMove, noDowngrade: true)) == .readImageList)
        let error = Self.failure(&machine, .imageList([Self.factory]))
        #expect(error?.code == .downgradeRefused)
        #expect(error?.state == .validating)
    }

    @Test func anUnnamedBootloaderWithoutStateWriteIsPlannedAgainAsDirectXIP() {
        var machine = Self.machine(.testAndConfirm)
        let notSupported = SMPDeviceError(.management(.notSupported), requestGroup: .image, command: 0)
        Self.run(
            &machine,
            Array(Self.probes.prefix(3)) + [
                (.bootloaderName(nil), .zero, .readImageList, .validating),
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
                (.deviceRefused(notSupported), .zero, .readImageList, .validating),
                (
                    .imageList([Self.factory, Slots.entry(nil, 1, Slots.b, "pP")]), .zero, .reset(force: false),
                    .resetting
                ),
            ]
        )
        #expect(machine.bootloaderMode == .directXIP)
        #expect(machine.plan?.mode == .uploadOnly)
    }

    @Test func reconnectingPastTheDeadlineFails() {
        var machine = Self.machine(.confirmOnly)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: true), .confirming),
                (
                    .stateWritten([Self.factory, Slots.entry(nil, 1, Slots.b, "pP")]), .zero, .reset(force: false),
                    .resetting
                ),
                (.done, .seconds(1), .probe, .waitingForReboot),
                (.probeUnanswered, .seconds(2), .wait(.seconds(3)), .waitingForSwap),
                (.waited, .seconds(5), .connect, .reconnecting),
                (Self.timeout, .seconds(6), .wait(.milliseconds(250)), .reconnecting),
                (.waited, .seconds(6), .connect, .reconnecting),
            ]
        )
        let error = Self.failure(&machine, Self.timeout, at: .seconds(66))
        #expect(error?.code == .reconnectFailed)
        #expect(error?.state == .reconnecting)
    }

    /// A test image running unconfirmed holds the slot with its revert target; asked to
    /// (`revertPending`), the machine resets so that MCUboot reverts it, then plans again — at
    /// most three times, for a device that never reverts.
    @Test func aRevertIsAskedForThenPlannedAgainAtMostThreeTimes() {
        var machine = Self.machine(revertPending: true)
        let busy = [Slots.entry(nil, 0, Slots.c, "a"), Slots.entry(nil, 1, Slots.a, "c")]
        Self.run(&machine, Self.probes)
        for round in 0..<3 {
            Self.run(
                &machine,
                [(.imageList(busy), .zero, .reset(force: false), .resetting)]
                    + Self.reboot(at: round * 10, list: busy, then: .reset(force: false), .resetting).dropLast()
            )
        }
        let error = Self.failure(&machine, .imageList(busy))
        #expect(error?.code == .slotBusy)
    }

    @Test func aRevertedSlotContinuesWithTheUpload() {
        var machine = Self.machine(revertPending: true)
        Self.run(
            &machine,
            Self.probes + [
                (
                    .imageList([Slots.entry(nil, 0, Slots.c, "a"), Slots.entry(nil, 1, Slots.a, "c")]), .zero,
                    .reset(force: false), .resetting,
                )
            ]
                + Self.reboot(
                    at: 1,
                    list: [Self.factory, Slots.entry(nil, 1, Slots.c)],
                    then: .readSlotInfo,
                    .validating
                )
                + [(.slotInfo([]), .seconds(1), Self.upload, .uploading)]
        )
    }

    /// Without `revertPending` the same device is refused before anything is sent, with what
    /// holds the slot; an image marked for the next boot is refused even with it.
    @Test(
        arguments: [
            ([Slots.entry(nil, 0, Slots.c, "a"), Slots.entry(nil, 1, Slots.a, "c")], false, .revert),
            ([Self.factory, Slots.entry(nil, 1, Slots.c, "p")], true, .test),
            ([Self.factory, Slots.entry(nil, 1, Slots.c, "pP")], true, .permanent),
        ] as [([ImageManagement.SlotState], Bool, FirmwareUpgradePlan.PendingBootChange.Kind)]
    )
    func aHeldSlotIsRefusedWithoutAReset(
        _ slots: [ImageManagement.SlotState],
        revertPending: Bool,
        kind: FirmwareUpgradePlan.PendingBootChange.Kind
    ) {
        var machine = Self.machine(revertPending: revertPending)
        Self.run(&machine, Self.probes)
        let error = Self.failure(&machine, .imageList(slots))
        #expect(error?.code == .slotBusy)
        #expect(error?.pendingBootChanges.map(\.kind) == [kind])
        #expect(machine.resetsBeforeUpload == 0)
    }

    @Test func directXIPDoesNotWaitForASwap() {
        var machine = Self.machine(.testAndConfirm)
        Self.run(
            &machine,
            Array(Self.probes.prefix(4)) + [
                (.bootloaderMode(.directXIP, noDowngrade: true), .zero, .readImageList, .validating),
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .reset(force: false), .resetting),
                (.done, .seconds(1), .probe, .waitingForReboot),
                (.probeUnanswered, .seconds(2), .wait(.zero), .waitingForSwap),
            ]
        )
        #expect(machine.plan?.mode == .uploadOnly)
    }

    @Test func pauseHoldsTheNextActionAndResumeRepeatsIt() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.pause, .zero, .waitForResume, .uploading),
                (.done, .zero, .waitForResume, .uploading),
                (.resume, .zero, Self.upload, .uploading),
            ]
        )
        #expect(!machine.isPaused)
    }

    /// Every state the lifecycle passes through, cancelled there: the error names that state.
    @Test func cancelEndsTheUpgradeInEveryState() {
        let script: [Line] =
            Self.probes + [
                (.imageList([Self.factory]), .zero, .readSlotInfo, .validating),
                (.slotInfo([]), .zero, Self.upload, .uploading),
                (.done, .zero, .writeImageState(hash: Self.b, confirm: false), .testing),
                (.stateWritten(Self.pendingB), .zero, .reset(force: false), .resetting),
            ]
            + Self.reboot(at: 1, list: Self.runningB, then: .writeImageState(hash: Self.b, confirm: true), .confirming)
            + [(.stateWritten([Slots.entry(nil, 0, Slots.b, "ac")]), .seconds(6), .readImageList, .verifying)]
        var machine = Self.machine()
        var seen: Set<FirmwareUpgrade.State> = []
        for line in script {
            var paused = machine
            _ = paused.handle(.pause)
            var cancelled = machine
            let state = machine.state
            let error = Self.failure(&cancelled, .cancel)
            #expect(error?.code == .cancelled)
            #expect(error?.code.category == .cancelled)
            #expect(error?.state == state)
            #expect(cancelled.state == .cancelled)
            #expect(Self.failure(&paused, .cancel)?.code == .cancelled)
            seen.insert(state)
            _ = machine.handle(line.input, at: line.at)
        }
        #expect(
            seen == [
                .idle, .requestingParameters, .readingBootloaderInfo, .validating, .uploading, .testing, .resetting,
                .waitingForReboot, .waitingForSwap, .reconnecting, .confirming,
            ]
        )
    }

    static let envelope = FirmwarePackage.Image(
        imageIndex: 0,
        slot: 0,
        fileName: "root.suit",
        content: .suitEnvelope,
        data: Data([1]),
        hash: Slots.hash(Slots.b)
    )

    static func suitMachine() -> Machine {
        Machine(
            configuration: .init(suitInstallTimeout: .seconds(30), suitPollInterval: .milliseconds(150)),
            payload: .suit(images: [envelope], resources: ["app.bin": Data([7])])
        )
    }

    /// SUIT: no image list; the device asks for a resource, gets it, then installs; the machine
    /// polls until the manifest digest shows.
    @Test func suitServesRequestedResourcesAndPollsUntilInstalled() {
        var machine = Self.suitMachine()
        Self.run(
            &machine,
            Array(Self.probes.prefix(3)) + [
                (
                    .bootloaderName("SUIT"), .zero, .uploadSUIT(.envelope(packageIndex: 0, deferInstall: false)),
                    .uploading
                ),
                (.done, .zero, .pollSUIT, .installing),
                (
                    .suitRequested(resource: "file://app.bin", session: 5), .zero,
                    .uploadSUIT(.resource(name: "file://app.bin", session: 5)), .installing
                ),
                (.done, .zero, .pollSUIT, .installing),
                (.suitNothingRequested, .zero, .readSUITManifests, .installing),
                (.suitManifests([Slots.hash(Slots.a)]), .seconds(1), .wait(.milliseconds(150)), .installing),
                (.waited, .seconds(1), .pollSUIT, .installing),
                (.suitNothingRequested, .seconds(1), .readSUITManifests, .installing),
                (.suitManifests([Slots.hash(Slots.b)]), .seconds(2), .succeed, .succeeded),
            ]
        )
    }

    /// A resource chunk refused as out of state (EBADSTATE): the device no longer waits for the
    /// resource — a retried last chunk whose first answer was lost after it completed it. The
    /// machine polls; the manifests say whether it installed.
    @Test func aResourceTheDeviceNoLongerWaitsForIsCheckedByPolling() {
        var machine = Self.suitMachine()
        let badState = SMPDeviceError(.management(.badState), requestGroup: .suit, command: 4)
        Self.run(
            &machine,
            Array(Self.probes.prefix(3)) + [
                (
                    .bootloaderName("SUIT"), .zero, .uploadSUIT(.envelope(packageIndex: 0, deferInstall: false)),
                    .uploading
                ),
                (.done, .zero, .pollSUIT, .installing),
                (
                    .suitRequested(resource: "file://app.bin", session: 5), .zero,
                    .uploadSUIT(.resource(name: "file://app.bin", session: 5)), .installing
                ),
                (.deviceRefused(badState), .zero, .pollSUIT, .installing),
                (.suitNothingRequested, .zero, .readSUITManifests, .installing),
                (.suitManifests([Slots.hash(Slots.b)]), .seconds(1), .succeed, .succeeded),
            ]
        )
        #expect(machine.warnings.contains { $0.contains("no longer waited for the resource") })
        // Anywhere else EBADSTATE is a refusal.
        var envelope = Self.suitMachine()
        Self.run(
            &envelope,
            Array(Self.probes.prefix(3)) + [
                (
                    .bootloaderName("SUIT"), .zero, .uploadSUIT(.envelope(packageIndex: 0, deferInstall: false)),
                    .uploading
                )
            ]
        )
        #expect(Self.failure(&envelope, .deviceRefused(badState))?.code == .deviceRejected)
    }

    @Test func suitFailsForAnUnknownResourceAndAtTheInstallDeadline() {
        var machine = Self.suitMachine()
        let start: [Line] =
            Array(Self.probes.prefix(3)) + [
                (
                    .bootloaderName("SUIT"), .zero, .uploadSUIT(.envelope(packageIndex: 0, deferInstall: false)),
                    .uploading
                ),
                (.done, .zero, .pollSUIT, .installing),
            ]
        Self.run(&machine, start)
        var deadline = machine
        #expect(
            Self.failure(&machine, .suitRequested(resource: "file://net.bin", session: 1))?.code == .resourceNotFound
        )
        Self.run(&deadline, [(.suitNothingRequested, .seconds(5), .readSUITManifests, .installing)])
        #expect(Self.failure(&deadline, .suitManifests([]), at: .seconds(31))?.code == .suitNotInstalled)
    }
}

/// The reset into the bootloader that single-slot devices are updated through.
@Suite struct FirmwareUpgradeStateMachineBootloaderTests {
    typealias Tests = FirmwareUpgradeStateMachineTests
    typealias Line = Tests.Line

    static let singleSlotProbes: [Line] = [
        (.start, .zero, .connect, .requestingParameters),
        (.connected, .zero, .readParameters, .requestingParameters),
        (.parametersRead, .zero, .readBootloaderInfo(query: nil), .readingBootloaderInfo),
        (.bootloaderName("MCUboot"), .zero, .readBootloaderInfo(query: "mode"), .readingBootloaderInfo),
        (.bootloaderMode(.singleApplication, noDowngrade: false), .zero, .readImageList, .validating),
        (.imageList([Tests.factory]), .zero, .reset(force: false, bootMode: 1), .enteringBootloader),
    ]
    /// What serial recovery lists: the application's image, no flags.
    static let recoveryList = [Slots.entry(nil, 0, Slots.a)]

    static func machine() -> FirmwareUpgradeStateMachine {
        FirmwareUpgradeStateMachine(
            configuration: .init(mode: .confirmOnly, estimatedSwapTime: .seconds(3), retries: 2),
            payload: .mcuboot([Slots.image(Slots.b)])
        )
    }

    @Test("reset with boot_mode 1, watch it go, check the bootloader answers, upload, reset out, verify")
    func wholeLifecycle() {
        var machine = Self.machine()
        Tests.run(
            &machine,
            Self.singleSlotProbes + [
                (.done, .seconds(1), .probe, .waitingForReboot),
                (.probeUnanswered, .seconds(2), .wait(.zero), .waitingForSwap),
                (.waited, .seconds(2), .connect, .reconnecting),
                (.connected, .seconds(2), .readImageList, .reconnecting),
                (.imageList(Self.recoveryList), .seconds(2), Tests.upload, .uploading),
                (.done, .seconds(3), .readImageList, .verifying),
                (.imageList([Slots.entry(nil, 0, Slots.b)]), .seconds(3), .reset(force: false), .resetting),
                (.done, .seconds(4), .probe, .waitingForReboot),
                (.probeUnanswered, .seconds(5), .wait(.zero), .waitingForSwap),
                (.waited, .seconds(5), .connect, .reconnecting),
                (.connected, .seconds(5), .readImageList, .reconnecting),
                (.imageList([Slots.entry(nil, 0, Slots.b, "ac")]), .seconds(5), .succeed, .succeeded),
            ]
        )
    }

    @Test(
        "the application comes back: watched until the reboot timeout, reset into the bootloader once more, then a clear failure"
    )
    func applicationComesBack() throws {
        var machine = Self.machine()
        Tests.run(
            &machine,
            Self.singleSlotProbes + [
                (.done, .seconds(1), .probe, .waitingForReboot),
                (.probeUnanswered, .seconds(2), .wait(.zero), .waitingForSwap),
                (.waited, .seconds(2), .connect, .reconnecting),
                (.connected, .seconds(2), .readImageList, .reconnecting),
                // Read too early (a lost probe looked like the device going): watch on.
                (.imageList([Tests.factory]), .seconds(2), .probe, .waitingForReboot),
                (.probeAnswered, .seconds(7), .wait(.zero), .waitingForSwap),
                (.waited, .seconds(7), .connect, .reconnecting),
                (.connected, .seconds(7), .readImageList, .reconnecting),
                // A power cut before the reboot would lose the boot mode the same way: once more.
            ] + Self.applicationBackAfterTheSecondReset
        )
        let error = try #require(Tests.failure(&machine, .imageList([Tests.factory]), at: .seconds(14)))
        #expect(error.code == .bootloaderNotEntered)
        #expect(error.message.contains("boot_mode") || error.message.contains("boot mode"))
    }

    /// The application seen at 7 s gets one more reset into the bootloader, and at 14 s is back
    /// again: the next list is the final outcome.
    static let applicationBackAfterTheSecondReset: [Line] = [
        (.imageList([Tests.factory]), .seconds(7), .reset(force: false, bootMode: 1), .enteringBootloader),
        (.done, .seconds(8), .probe, .waitingForReboot),
        (.probeUnanswered, .seconds(9), .wait(.zero), .waitingForSwap),
        (.waited, .seconds(9), .connect, .reconnecting),
        (.connected, .seconds(14), .readImageList, .reconnecting),
    ]

    @Test("the reset's answer lost and the device never went away: the same reset, boot mode included, once more")
    func lostAnswerResendsTheSameReset() {
        var machine = Self.machine()
        Tests.run(
            &machine,
            Self.singleSlotProbes + [
                (.outcomeUnknown(SMPTransportError(.outcomeUnknown)), .seconds(1), .probe, .waitingForReboot),
                (.probeAnswered, .seconds(7), .wait(.zero), .waitingForSwap),
                (.waited, .seconds(7), .connect, .reconnecting),
                (.connected, .seconds(7), .readImageList, .reconnecting),
                (.imageList([Tests.factory]), .seconds(7), .reset(force: false, bootMode: 1), .enteringBootloader),
            ]
        )
        #expect(machine.warnings.contains { $0.contains("once more") })
    }

    @Test(
        "the reset's answer lost, the device went away and came back running the application: sent once more; the same outcome again is final"
    )
    func lostAnswerAndTheApplicationBack() throws {
        var machine = Self.machine()
        Tests.run(
            &machine,
            Self.singleSlotProbes + [
                (.outcomeUnknown(SMPTransportError(.outcomeUnknown)), .seconds(1), .probe, .waitingForReboot),
                (.probeUnanswered, .seconds(2), .probe, .waitingForReboot),
                (.probeUnanswered, .seconds(3), .wait(.zero), .waitingForSwap),
                (.waited, .seconds(3), .connect, .reconnecting),
                (.connected, .seconds(7), .readImageList, .reconnecting),
            ] + Self.applicationBackAfterTheSecondReset
        )
        let error = try #require(Tests.failure(&machine, .imageList([Tests.factory]), at: .seconds(14)))
        #expect(error.code == .bootloaderNotEntered)
    }

    @Test(
        "a device found in serial recovery (no bootloader info, nothing running) that does not come back after the reset out: the recovery button is named"
    )
    func recognisedRecoveryNotBackNamesTheButton() throws {
        var machine = Self.machine()
        Tests.run(
            &machine,
            Array(Tests.probes.prefix(3)) + [
                (.bootloaderName(nil), .zero, .readImageList, .validating),
                (.imageList(Self.recoveryList), .zero, Tests.upload, .uploading),
                (.done, .seconds(1), .readImageList, .verifying),
                (.imageList([Slots.entry(nil, 0, Slots.b)]), .seconds(1), .reset(force: false), .resetting),
                (.done, .seconds(2), .probe, .waitingForReboot),
                // The mode is unknown: the swap time is waited as for a swap bootloader.
                (.probeUnanswered, .seconds(3), .wait(.seconds(3)), .waitingForSwap),
                (.waited, .seconds(6), .connect, .reconnecting),
            ]
        )
        #expect(machine.plan?.throughBootloader == true)
        #expect(machine.bootloaderMode == nil)
        let error = try #require(Tests.failure(&machine, Tests.timeout, at: .seconds(70)))
        #expect(error.code == .reconnectFailed)
        #expect(error.message.contains("hold the recovery button"))
    }

    @Test("busy: the reset into the bootloader is sent again with force, boot mode kept")
    func busy() {
        var machine = Self.machine()
        let busy = SMPDeviceError(.management(.busy), requestGroup: .os, command: 5)
        Tests.run(
            &machine,
            Self.singleSlotProbes + [
                (.deviceRefused(busy), .zero, .reset(force: true, bootMode: 1), .enteringBootloader)
            ]
        )
    }
}
