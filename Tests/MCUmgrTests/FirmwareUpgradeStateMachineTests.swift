import Foundation
import MCUboot
import MCUmgr
import SMPCore
import Testing

@Suite struct FirmwareUpgradeStateMachineTests {
    typealias Machine = FirmwareUpgradeStateMachine
    typealias Input = FirmwareUpgradeStateMachine.Input
    typealias Action = FirmwareUpgradeStateMachine.Action

    static let b = Slots.hash(Slots.b)
    static let factory = Slots.entry(nil, 0, Slots.a, "ac")

    static func machine(_ mode: FirmwareUpgrade.Mode = .testAndConfirm, retries: Int = 2) -> Machine {
        Machine(
            configuration: .init(mode: mode, estimatedSwapTime: .seconds(3), retries: retries),
            images: [Slots.image(Slots.b)]
        )
    }

    /// Feeds inputs, checking each answer and the state after it.
    static func run(
        _ machine: inout Machine,
        _ script: [(Input, Action, FirmwareUpgrade.State)],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (index, (input, expected, state)) in script.enumerated() {
            let action = machine.handle(input)
            #expect(action == expected, "line \(index): \(input)", sourceLocation: sourceLocation)
            #expect(machine.state == state, "line \(index): \(input)", sourceLocation: sourceLocation)
        }
    }

    /// The probes, up to the image list.
    static let probes: [(Input, Action, FirmwareUpgrade.State)] = [
        (.start, .readParameters, .requestingParameters),
        (.parametersRead, .readBootloaderInfo, .readingBootloaderInfo),
        (.bootloaderInfo(name: "MCUboot", mode: .swapUsingMove), .readImageList, .validating),
    ]

    @Test func testAndConfirmRunsTheWholeLifecycle() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading),
                (.stepCompleted(slots: nil), .perform(.test(hash: Self.b)), .testing),
                (
                    .stepCompleted(slots: [Self.factory, Slots.entry(nil, 1, Slots.b, "p")]), .perform(.reset),
                    .resetting
                ),
                (.stepCompleted(slots: nil), .waitForSwap(.seconds(3)), .waitingForSwap),
                (.swapWaitOver, .reconnect, .reconnecting),
                (.reconnected, .readImageList, .verifying),
                (
                    .imageList([Slots.entry(nil, 0, Slots.b, "a"), Slots.entry(nil, 1, Slots.a, "c")]),
                    .perform(.confirm(hash: Self.b)), .confirming
                ),
                (.stepCompleted(slots: [Slots.entry(nil, 0, Slots.b, "ac")]), .readImageList, .verifying),
                (.imageList([Slots.entry(nil, 0, Slots.b, "ac"), Slots.entry(nil, 1, Slots.a)]), .succeed, .succeeded),
            ]
        )
        #expect(machine.initialSlots == [Self.factory])
        #expect(machine.isFinished)
    }

    @Test func anUpToDateDeviceSucceedsWithoutCommands() {
        var machine = Self.machine()
        Self.run(&machine, Self.probes + [(.imageList([Slots.entry(nil, 0, Slots.b, "ac")]), .succeed, .succeeded)])
        #expect(machine.plan?.isUpToDate == true)
    }

    @Test func aLinkFailureReconnectsAndRetriesTheStepUntilTheRetriesRunOut() {
        var machine = Self.machine(retries: 1)
        let upload = Action.perform(.upload(imageIndex: 0, packageIndex: 0))
        let failure = Input.linkFailed(SMPTransportError(.disconnected))
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), upload, .uploading),
                (failure, .reconnect, .reconnecting),
                (.reconnected, upload, .uploading),
            ]
        )
        guard case .fail(let error) = machine.handle(failure) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .linkFailed)
        #expect(error.state == .uploading)
        #expect(machine.state == .failed)
    }

    @Test func aLostResetAnswerCountsAsAReset() {
        var machine = Self.machine(.confirmOnly)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading),
                (.stepCompleted(slots: nil), .perform(.confirm(hash: Self.b)), .confirming),
                (
                    .stepCompleted(slots: [Self.factory, Slots.entry(nil, 1, Slots.b, "pP")]), .perform(.reset),
                    .resetting
                ),
                (.linkFailed(SMPTransportError(.timeout)), .waitForSwap(.seconds(3)), .waitingForSwap),
            ]
        )
    }

    @Test func aResetThatDidNotHappenIsSentOnceMoreThenFails() {
        var machine = Self.machine(.testOnly, retries: 1)
        let pending = [Self.factory, Slots.entry(nil, 1, Slots.b, "p")]
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading),
                (.stepCompleted(slots: nil), .perform(.test(hash: Self.b)), .testing),
                (.stepCompleted(slots: pending), .perform(.reset), .resetting),
                (.stepCompleted(slots: nil), .waitForSwap(.seconds(3)), .waitingForSwap),
                (.swapWaitOver, .reconnect, .reconnecting),
                (.reconnected, .readImageList, .verifying),
                (.imageList(pending), .perform(.reset), .resetting),
                (.stepCompleted(slots: nil), .waitForSwap(.seconds(3)), .waitingForSwap),
                (.swapWaitOver, .reconnect, .reconnecting),
                (.reconnected, .readImageList, .verifying),
            ]
        )
        guard case .fail(let error) = machine.handle(.imageList(pending)) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .resetFailed)
        #expect(error.state == .verifying)
    }

    @Test func aRevertAfterResetIsAClearFailure() {
        var machine = Self.machine(.testOnly)
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading),
                (.stepCompleted(slots: nil), .perform(.test(hash: Self.b)), .testing),
                (
                    .stepCompleted(slots: [Self.factory, Slots.entry(nil, 1, Slots.b, "p")]), .perform(.reset),
                    .resetting
                ),
                (.stepCompleted(slots: nil), .waitForSwap(.seconds(3)), .waitingForSwap),
                (.swapWaitOver, .reconnect, .reconnecting),
                (.reconnected, .readImageList, .verifying),
            ]
        )
        let action = machine.handle(.imageList([Self.factory, Slots.entry(nil, 1, Slots.b)]))
        guard case .fail(let error) = action else {
            Issue.record("expected a failure, got \(action)")
            return
        }
        #expect(error.code == .imageNotActive)
        #expect(error.state == .verifying)
    }

    @Test func aTestTheDeviceDoesNotMarkFails() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading),
                (.stepCompleted(slots: nil), .perform(.test(hash: Self.b)), .testing),
            ]
        )
        guard
            case .fail(let error) = machine.handle(.stepCompleted(slots: [Self.factory, Slots.entry(nil, 1, Slots.b)]))
        else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .imageNotMarked)
        #expect(error.state == .testing)
    }

    @Test func aDeviceRefusalFailsInItsState() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [(.imageList([Self.factory]), .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading)]
        )
        let refusal = SMPDeviceError(.group(.image, 9), requestGroup: .image, command: 1)
        guard case .fail(let error) = machine.handle(.deviceRefused(refusal)) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .deviceRejected)
        #expect(error.state == .uploading)
        #expect(error.cause is SMPDeviceError)
    }

    @Test func anUnnamedBootloaderWithoutStateWriteIsPlannedAgainAsDirectXIP() {
        var machine = Self.machine(.testAndConfirm)
        let notSupported = SMPDeviceError(.management(.notSupported), requestGroup: .image, command: 0)
        Self.run(
            &machine,
            [
                (.start, .readParameters, .requestingParameters),
                (.parametersRead, .readBootloaderInfo, .readingBootloaderInfo),
                (.bootloaderInfo(name: nil, mode: nil), .readImageList, .validating),
                (.imageList([Self.factory]), .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading),
                (.stepCompleted(slots: nil), .perform(.test(hash: Self.b)), .testing),
                (.deviceRefused(notSupported), .readImageList, .validating),
                (.imageList([Self.factory, Slots.entry(nil, 1, Slots.b, "pP")]), .perform(.reset), .resetting),
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
                (.imageList([Self.factory]), .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading),
                (.stepCompleted(slots: nil), .perform(.confirm(hash: Self.b)), .confirming),
                (
                    .stepCompleted(slots: [Self.factory, Slots.entry(nil, 1, Slots.b, "pP")]), .perform(.reset),
                    .resetting
                ),
                (.stepCompleted(slots: nil), .waitForSwap(.seconds(3)), .waitingForSwap),
                (.swapWaitOver, .reconnect, .reconnecting),
            ]
        )
        guard case .fail(let error) = machine.handle(.linkFailed(SMPTransportError(.timeout))) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .reconnectFailed)
        #expect(error.state == .reconnecting)
    }

    @Test func aBusySlotIsFreedByResettingThenPlannedAgainAtMostThreeTimes() {
        var machine = Self.machine()
        let busy = [Self.factory, Slots.entry(nil, 1, Slots.c, "p")]
        Self.run(&machine, Self.probes)
        for _ in 0..<3 {
            Self.run(
                &machine,
                [
                    (.imageList(busy), .perform(.resetBeforeUpload), .resetting),
                    (.stepCompleted(slots: nil), .waitForSwap(.seconds(3)), .waitingForSwap),
                    (.swapWaitOver, .reconnect, .reconnecting),
                    (.reconnected, .readImageList, .validating),
                ]
            )
        }
        guard case .fail(let error) = machine.handle(.imageList(busy)) else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .slotBusy)
    }

    @Test func aFreedSlotContinuesWithTheUpload() {
        var machine = Self.machine()
        Self.run(
            &machine,
            Self.probes + [
                (
                    .imageList([Self.factory, Slots.entry(nil, 1, Slots.c, "p")]), .perform(.resetBeforeUpload),
                    .resetting
                ),
                (.stepCompleted(slots: nil), .waitForSwap(.seconds(3)), .waitingForSwap),
                (.swapWaitOver, .reconnect, .reconnecting),
                (.reconnected, .readImageList, .validating),
                (
                    .imageList([Slots.entry(nil, 0, Slots.c, "a"), Slots.entry(nil, 1, Slots.a, "c")]),
                    .perform(.resetBeforeUpload), .resetting
                ),
                (.stepCompleted(slots: nil), .waitForSwap(.seconds(3)), .waitingForSwap),
                (.swapWaitOver, .reconnect, .reconnecting),
                (.reconnected, .readImageList, .validating),
                (
                    .imageList([Self.factory, Slots.entry(nil, 1, Slots.c)]),
                    .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading
                ),
            ]
        )
    }

    @Test func directXIPDoesNotWaitForASwap() {
        var machine = Self.machine(.testAndConfirm)
        Self.run(
            &machine,
            [
                (.start, .readParameters, .requestingParameters),
                (.parametersRead, .readBootloaderInfo, .readingBootloaderInfo),
                (.bootloaderInfo(name: "MCUboot", mode: .directXIP), .readImageList, .validating),
                (.imageList([Self.factory]), .perform(.upload(imageIndex: 0, packageIndex: 0)), .uploading),
                (.stepCompleted(slots: nil), .perform(.reset), .resetting),
                (.stepCompleted(slots: nil), .waitForSwap(.zero), .waitingForSwap),
            ]
        )
        #expect(machine.plan?.mode == .uploadOnly)
    }

    @Test func pauseHoldsTheNextActionAndResumeRepeatsIt() {
        var machine = Self.machine()
        let upload = Action.perform(.upload(imageIndex: 0, packageIndex: 0))
        Self.run(
            &machine,
            Self.probes + [
                (.imageList([Self.factory]), upload, .uploading),
                (.pause, .waitForResume, .uploading),
                (.stepCompleted(slots: nil), .waitForResume, .uploading),
                (.resume, upload, .uploading),
            ]
        )
        #expect(!machine.isPaused)
    }

    /// Every state the lifecycle passes through, cancelled there: the error names that state.
    @Test func cancelEndsTheUpgradeInEveryState() {
        let script: [Input] = [
            .start, .parametersRead, .bootloaderInfo(name: "MCUboot", mode: .swapUsingMove), .imageList([Self.factory]),
            .stepCompleted(slots: nil), .stepCompleted(slots: [Self.factory, Slots.entry(nil, 1, Slots.b, "p")]),
            .stepCompleted(slots: nil), .swapWaitOver, .reconnected,
            .imageList([Slots.entry(nil, 0, Slots.b, "a"), Slots.entry(nil, 1, Slots.a, "c")]),
            .stepCompleted(slots: [Slots.entry(nil, 0, Slots.b, "ac")]),
        ]
        var machine = Self.machine()
        var seen: Set<FirmwareUpgrade.State> = []
        for input in script {
            var paused = machine
            _ = paused.handle(.pause)
            var cancelled = machine
            let state = machine.state
            guard case .fail(let error) = cancelled.handle(.cancel) else {
                Issue.record("cancel did not end the upgrade while \(state)")
                return
            }
            #expect(error.code == .cancelled)
            #expect(error.state == state)
            #expect(cancelled.state == .cancelled)
            guard case .fail(let pausedError) = paused.handle(.cancel) else {
                Issue.record("cancel did not end the paused upgrade while \(state)")
                return
            }
            #expect(pausedError.code == .cancelled)
            seen.insert(state)
            _ = machine.handle(input)
        }
        #expect(
            seen == [
                .idle, .requestingParameters, .readingBootloaderInfo, .validating, .uploading, .testing, .resetting,
                .waitingForSwap, .reconnecting, .verifying, .confirming,
            ]
        )
    }

    @Test func suitPackagesSkipTheImageList() {
        let envelope = FirmwarePackage.Image(
            imageIndex: 0,
            slot: 0,
            fileName: "root.suit",
            content: .suitEnvelope,
            data: Data([1]),
            hash: Self.b
        )
        var machine = Machine(configuration: .init(), images: [envelope], isSUIT: true)
        Self.run(
            &machine,
            [
                (.start, .readParameters, .requestingParameters),
                (.parametersRead, .readBootloaderInfo, .readingBootloaderInfo),
                (
                    .bootloaderInfo(name: nil, mode: nil),
                    .perform(.suitUploadEnvelope(packageIndex: 0, deferInstall: false)),
                    .uploading
                ),
                (.stepCompleted(slots: nil), .perform(.suitInstall(digest: Self.b)), .installing),
                (.stepCompleted(slots: nil), .succeed, .succeeded),
            ]
        )
    }
}
