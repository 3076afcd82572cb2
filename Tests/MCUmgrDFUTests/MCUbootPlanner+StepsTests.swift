import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import Testing

/// Every mode × every starting state of the slots, with and without `revertPending`: upload-only
/// never resets, a revert happens only when asked for and shows in the plan, and an image marked
/// for the next boot is never booted on the upgrade's initiative. Package image B; A the factory
/// image; C another image.
@Suite struct MCUbootPlannerStepsTests {
    typealias Mode = FirmwareUpgrade.Mode
    typealias Kind = FirmwareUpgradePlan.PendingBootChange.Kind

    enum Start: String, CaseIterable, Sendable {
        /// A runs confirmed, slot 1 empty.
        case fresh
        /// C in slot 1 marked for test: a reset boots it once.
        case testPending = "test pending"
        /// B (the package's) runs unconfirmed after a test; A in slot 1 is its revert target.
        case runningUnconfirmed = "running unconfirmed"
        /// C runs unconfirmed after a test; A in slot 1 is its revert target.
        case revertTargetPresent = "revert target present"
        /// C in slot 1 confirmed for the next boot: a reset installs it for good.
        case confirmedPermanent = "confirmed permanent"
        /// C runs unconfirmed; the package's B is its revert target in slot 1.
        case packageIsRevertTarget = "package is the revert target"

        var slots: [ImageManagement.SlotState] {
            switch self {
            case .fresh: [Slots.entry(nil, 0, Slots.a, "ac")]
            case .testPending: [Slots.entry(nil, 0, Slots.a, "ac"), Slots.entry(nil, 1, Slots.c, "p")]
            case .runningUnconfirmed: [Slots.entry(nil, 0, Slots.b, "a"), Slots.entry(nil, 1, Slots.a, "c")]
            case .revertTargetPresent: [Slots.entry(nil, 0, Slots.c, "a"), Slots.entry(nil, 1, Slots.a, "c")]
            case .confirmedPermanent: [Slots.entry(nil, 0, Slots.a, "ac"), Slots.entry(nil, 1, Slots.c, "pP")]
            case .packageIsRevertTarget: [Slots.entry(nil, 0, Slots.c, "a"), Slots.entry(nil, 1, Slots.b, "c")]
            }
        }
    }

    /// What a plan must be.
    enum Outcome: Equatable, CustomStringConvertible {
        /// These steps.
        case steps([FirmwareUpgradePlan.Step])
        /// A revert of these kinds first, then planning again.
        case revert
        /// Refused (`slotBusy`) with these pending changes.
        case refused(Kind)

        var description: String {
            switch self {
            case .steps(let steps): "\(steps)"
            case .revert: "revert"
            case .refused(let kind): "refused (\(kind))"
            }
        }
    }

    static let b = Slots.hash(Slots.b)
    static let upload = FirmwarePlanStep.upload(imageIndex: 0, packageIndex: 0)
    typealias FirmwarePlanStep = FirmwareUpgradePlan.Step

    /// The expected plan of each combination.
    static func expected(_ start: Start, _ mode: Mode, revertPending: Bool) -> Outcome {
        switch (start, mode) {
        case (.fresh, .uploadOnly): .steps([upload, .verify(.present)])
        case (.fresh, .testOnly): .steps([upload, .test(hash: b), .reset, .verify(.active)])
        case (.fresh, .confirmOnly): .steps([upload, .confirm(hash: b), .reset, .verify(.activeConfirmed)])
        case (.fresh, .testAndConfirm):
            .steps([upload, .test(hash: b), .reset, .verify(.active), .confirm(hash: b), .verify(.activeConfirmed)])
        case (.testPending, _): .refused(.test)
        case (.confirmedPermanent, _): .refused(.permanent)
        case (.runningUnconfirmed, .uploadOnly), (.runningUnconfirmed, .testOnly): .steps([])
        case (.runningUnconfirmed, _): .steps([.confirm(hash: b), .verify(.activeConfirmed)])
        case (.revertTargetPresent, .uploadOnly): .refused(.revert)
        case (.revertTargetPresent, _): revertPending ? .revert : .refused(.revert)
        // B is on the device, which is all upload-only promises; the others need the revert.
        case (.packageIsRevertTarget, .uploadOnly): .steps([])
        case (.packageIsRevertTarget, _): revertPending ? .revert : .refused(.revert)
        }
    }

    static let combinations: [(Start, Mode, Bool)] = Start.allCases.flatMap { start in
        Mode.allCases.flatMap { mode in [false, true].map { (start, mode, $0) } }
    }

    @Test(arguments: combinations)
    func everyModeFromEveryStart(_ start: Start, _ mode: Mode, _ revertPending: Bool) throws {
        let expected = Self.expected(start, mode, revertPending: revertPending)
        let outcome: Outcome
        do {
            let plan = try MCUbootPlanner.plan(
                images: [Slots.image(Slots.b)],
                slots: start.slots,
                bootloaderMode: .swapUsingMove,
                mode: mode,
                revertPending: revertPending
            )
            if case .revert(let changes) = plan.steps.first {
                #expect(plan.steps.count == 1 && changes.allSatisfy { $0.kind == .revert })
                outcome = .revert
            } else {
                outcome = .steps(plan.steps)
            }
            // Upload-only never resets, and a reset appears only where the mode asks for one.
            if mode == .uploadOnly { #expect(!plan.resets) }
        } catch {
            #expect(error.code == .slotBusy)
            let kinds = Set(error.pendingBootChanges.map(\.kind))
            #expect(kinds.count == 1, "\(error.pendingBootChanges)")
            outcome = .refused(kinds.first ?? .revert)
        }
        #expect(outcome == expected, "\(start.rawValue), \(mode), revertPending \(revertPending)")
    }

    /// The refusal names what holds the slot and the ways out, with the running image's hash.
    @Test func theRefusalNamesTheStateAndTheWaysOut() {
        do {
            _ = try MCUbootPlanner.plan(
                images: [Slots.image(Slots.b)],
                slots: Start.revertTargetPresent.slots,
                bootloaderMode: .swapUsingMove,
                mode: .uploadOnly
            )
            Issue.record("planned")
        } catch {
            #expect(
                error.message
                    == "image 0: 3.0.0 runs unconfirmed (a test) and slot 1 holds 1.0.0, which the next reset brings back (a revert); nothing was changed: confirm the running image to keep it (image 0 with hash \(String(repeating: "cc", count: 32))), or reset the device to let it revert, then upgrade again"
            )
            #expect(error.pendingBootChanges.first?.runningVersion == "3.0.0")
        }
    }

    /// DirectXIP without revert: an image in the other slot that boots next (a higher version) is
    /// not erased to make room, whatever the mode.
    @Test(arguments: Mode.allCases)
    func directXIPDoesNotOverwriteTheImageThatBootsNext(_ mode: Mode) {
        #expect {
            _ = try MCUbootPlanner.plan(
                images: [Slots.image(Slots.b)],
                slots: [Slots.entry(nil, 0, Slots.a, "ac"), Slots.entry(nil, 1, Slots.c, "pP")],
                bootloaderMode: .directXIP,
                mode: mode,
                revertPending: true
            )
        } throws: { error in
            (error as? PlanningFailure)?.pendingBootChanges.map(\.kind) == [.permanent]
        }
    }
}
