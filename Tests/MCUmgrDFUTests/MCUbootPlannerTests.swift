import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import Testing

/// Builders for slot lists and package images; hashes are one repeated byte (A = 0xaa, …).
enum Slots {
    static let a: UInt8 = 0xaa
    static let b: UInt8 = 0xbb
    static let c: UInt8 = 0xcc

    static func hash(_ byte: UInt8) -> [UInt8] { Array(repeating: byte, count: 32) }

    /// A slot entry; `flags` letters: a active, c confirmed, p pending, P permanent.
    static func entry(_ image: Int?, _ slot: Int, _ byte: UInt8, _ flags: String = "") -> ImageManagement.SlotState {
        ImageManagement.SlotState(
            image: image.map(UInt32.init),
            slot: UInt32(slot),
            version: byte == a ? "1.0.0" : byte == b ? "2.0.0" : "3.0.0",
            hash: Data(hash(byte)),
            bootable: true,
            pending: flags.contains("p"),
            confirmed: flags.contains("c"),
            active: flags.contains("a"),
            permanent: flags.contains("P")
        )
    }

    static func image(_ byte: UInt8, index: Int = 0, slot: Int = 1, version: String? = nil) -> FirmwarePackage.Image {
        var image = FirmwarePackage.Image(
            imageIndex: index,
            slot: slot,
            fileName: "image\(index)-slot\(slot).bin",
            content: .mcuboot,
            data: Data(repeating: byte, count: 64),
            hash: hash(byte)
        )
        image.version = version.flatMap(ImageVersion.init)
        return image
    }
}

@Suite struct MCUbootPlannerTests {
    typealias Step = FirmwareUpgradePlan.Step
    typealias Mode = FirmwareUpgrade.Mode

    static let b = Slots.hash(Slots.b)

    /// One image, swap bootloader: the device state × mode → the exact command sequence.
    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var slots: [ImageManagement.SlotState]
        var mode: Mode
        var action: FirmwareUpgradePlan.ImagePlan.Action?
        var steps: [Step]
        var testDescription: String { "\(name), \(mode)" }
    }

    static let factory = Slots.entry(nil, 0, Slots.a, "ac")
    static let rows: [Row] = [
        // Fresh upgrade: the package image is not on the device.
        Row(
            name: "fresh",
            slots: [factory],
            mode: .testAndConfirm,
            action: .upload,
            steps: [
                .upload(imageIndex: 0, packageIndex: 0), .test(hash: b), .reset, .verify(.active), .confirm(hash: b),
                .verify(.activeConfirmed),
            ]
        ),
        Row(
            name: "fresh",
            slots: [factory],
            mode: .confirmOnly,
            action: .upload,
            steps: [.upload(imageIndex: 0, packageIndex: 0), .confirm(hash: b), .reset, .verify(.activeConfirmed)]
        ),
        Row(
            name: "fresh",
            slots: [factory],
            mode: .testOnly,
            action: .upload,
            steps: [.upload(imageIndex: 0, packageIndex: 0), .test(hash: b), .reset, .verify(.active)]
        ),
        Row(
            name: "fresh",
            slots: [factory],
            mode: .uploadOnly,
            action: .upload,
            steps: [.upload(imageIndex: 0, packageIndex: 0), .verify(.present)]
        ),
        // A stale image without flags in slot 1 is overwritten.
        Row(
            name: "stale secondary",
            slots: [factory, Slots.entry(nil, 1, Slots.c)],
            mode: .confirmOnly,
            action: .upload,
            steps: [.upload(imageIndex: 0, packageIndex: 0), .confirm(hash: b), .reset, .verify(.activeConfirmed)]
        ),
        // Already running and confirmed: nothing in any mode.
        Row(
            name: "running",
            slots: [Slots.entry(nil, 0, Slots.b, "ac")],
            mode: .testAndConfirm,
            action: .skip,
            steps: []
        ),
        Row(name: "running", slots: [Slots.entry(nil, 0, Slots.b, "ac")], mode: .confirmOnly, action: .skip, steps: []),
        Row(name: "running", slots: [Slots.entry(nil, 0, Slots.b, "ac")], mode: .testOnly, action: .skip, steps: []),
        Row(name: "running", slots: [Slots.entry(nil, 0, Slots.b, "ac")], mode: .uploadOnly, action: .skip, steps: []),
        // Already uploaded, no flags: no upload.
        Row(
            name: "uploaded",
            slots: [factory, Slots.entry(nil, 1, Slots.b)],
            mode: .testAndConfirm,
            action: .alreadyUploaded,
            steps: [.test(hash: b), .reset, .verify(.active), .confirm(hash: b), .verify(.activeConfirmed)]
        ),
        Row(
            name: "uploaded",
            slots: [factory, Slots.entry(nil, 1, Slots.b)],
            mode: .uploadOnly,
            action: .skip,
            steps: []
        ),
        // Already pending (tested): only the reset (and confirm) are left.
        Row(
            name: "pending",
            slots: [factory, Slots.entry(nil, 1, Slots.b, "p")],
            mode: .testAndConfirm,
            action: .alreadyMarked,
            steps: [.reset, .verify(.active), .confirm(hash: b), .verify(.activeConfirmed)]
        ),
        Row(
            name: "pending",
            slots: [factory, Slots.entry(nil, 1, Slots.b, "p")],
            mode: .testOnly,
            action: .alreadyMarked,
            steps: [.reset, .verify(.active)]
        ),
        Row(
            name: "pending",
            slots: [factory, Slots.entry(nil, 1, Slots.b, "p")],
            mode: .confirmOnly,
            action: .alreadyUploaded,
            steps: [.confirm(hash: b), .reset, .verify(.activeConfirmed)]
        ),
        Row(
            name: "permanent",
            slots: [factory, Slots.entry(nil, 1, Slots.b, "pP")],
            mode: .confirmOnly,
            action: .alreadyMarked,
            steps: [.reset, .verify(.activeConfirmed)]
        ),
        // Running after a test, not confirmed: confirm only, no reset.
        Row(
            name: "running unconfirmed",
            slots: [Slots.entry(nil, 0, Slots.b, "a"), Slots.entry(nil, 1, Slots.a, "c")],
            mode: .testAndConfirm,
            action: .confirmRunning,
            steps: [.confirm(hash: b), .verify(.activeConfirmed)]
        ),
        Row(
            name: "running unconfirmed",
            slots: [Slots.entry(nil, 0, Slots.b, "a"), Slots.entry(nil, 1, Slots.a, "c")],
            mode: .confirmOnly,
            action: .confirmRunning,
            steps: [.confirm(hash: b), .verify(.activeConfirmed)]
        ),
        Row(
            name: "running unconfirmed",
            slots: [Slots.entry(nil, 0, Slots.b, "a"), Slots.entry(nil, 1, Slots.a, "c")],
            mode: .testOnly,
            action: .skip,
            steps: []
        ),
    ]

    @Test(arguments: rows)
    func planForOneSwapImage(_ row: Row) throws {
        let plan = try MCUbootPlanner.plan(
            images: [Slots.image(Slots.b)],
            slots: row.slots,
            bootloaderMode: .swapUsingMove,
            mode: row.mode
        )
        #expect(plan.steps == row.steps)
        #expect(plan.images.map(\.action) == [row.action].compactMap { $0 })
        #expect(plan.mode == row.mode)
        #expect(plan.isUpToDate == row.steps.isEmpty)
    }

    /// Two images, found by the fault matrix: image 1 runs unconfirmed from an earlier test (a
    /// power loss between the two test writes), image 0 waits in slot 1. The reset image 0 needs
    /// would revert image 1: test-only refuses unless asked to revert it (then it reverts it first
    /// and tests both again under one reset); test-and-confirm confirms it before that reset.
    static let halfTested = [
        Slots.entry(0, 0, Slots.a, "ac"), Slots.entry(0, 1, Slots.b),
        Slots.entry(1, 0, Slots.b, "a"), Slots.entry(1, 1, Slots.a, "c"),
    ]
    static let twoImages = [Slots.image(Slots.b, index: 0), Slots.image(Slots.b, index: 1)]

    @Test func aResetNeverRevertsAnImageThePlanLeavesAlone() throws {
        #expect {
            _ = try MCUbootPlanner.plan(
                images: Self.twoImages,
                slots: Self.halfTested,
                bootloaderMode: .swapUsingMove,
                mode: .testOnly
            )
        } throws: { error in
            let failure = error as? PlanningFailure
            return failure?.code == .slotBusy && failure?.pendingBootChanges.map(\.imageIndex) == [1]
        }
        let revert = try MCUbootPlanner.plan(
            images: Self.twoImages,
            slots: Self.halfTested,
            bootloaderMode: .swapUsingMove,
            mode: .testOnly,
            revertPending: true
        )
        guard case .revert(let changes) = revert.steps.first else {
            Issue.record("no revert: \(revert.steps)")
            return
        }
        #expect(revert.steps.count == 1)
        #expect(changes.map(\.imageIndex) == [1])
        #expect(changes.first?.runningHash == Self.b)
        #expect(changes.first?.hash == Slots.hash(Slots.a))

        let testAndConfirm = try MCUbootPlanner.plan(
            images: Self.twoImages,
            slots: Self.halfTested,
            bootloaderMode: .swapUsingMove,
            mode: .testAndConfirm
        )
        #expect(
            testAndConfirm.steps == [
                .confirm(hash: Self.b), .test(hash: Self.b), .reset, .verify(.active), .confirm(hash: Self.b),
                .verify(.activeConfirmed),
            ]
        )
    }

    /// The verdict after a reset covers every image of the package, skipped ones too: an image
    /// the reset reverted is not a success.
    @Test func theVerdictCoversSkippedImages() {
        let plan = FirmwareUpgradePlan(
            mode: .testOnly,
            bootloaderMode: .swapUsingMove,
            images: [
                .init(
                    imageIndex: 0,
                    packageIndex: 0,
                    hash: Self.b,
                    version: "2.0.0",
                    slot: 1,
                    action: .alreadyUploaded,
                    reason: ""
                ),
                .init(
                    imageIndex: 1,
                    packageIndex: 1,
                    hash: Self.b,
                    version: "2.0.0",
                    slot: 0,
                    action: .skip,
                    reason: ""
                ),
            ],
            steps: [.test(hash: Self.b), .reset, .verify(.active)]
        )
        let reverted = [
            Slots.entry(0, 0, Slots.b, "a"), Slots.entry(0, 1, Slots.a, "c"),
            Slots.entry(1, 0, Slots.a, "ac"), Slots.entry(1, 1, Slots.b),
        ]
        guard case .failed(let code, let message) = MCUbootPlanner.verify(.active, plan: plan, slots: reverted) else {
            Issue.record("a reverted image passed")
            return
        }
        #expect(code == .imageNotActive)
        #expect(message.hasPrefix("image 1"))
    }

    @Test func overwriteOnlyUsesTheSameSequence() throws {
        for mode in Mode.allCases {
            let swap = try MCUbootPlanner.plan(
                images: [Slots.image(Slots.b)],
                slots: [Self.factory],
                bootloaderMode: .swapUsingScratch,
                mode: mode
            )
            let overwrite = try MCUbootPlanner.plan(
                images: [Slots.image(Slots.b)],
                slots: [Self.factory],
                bootloaderMode: .overwriteOnly,
                mode: mode
            )
            #expect(swap.steps == overwrite.steps, "\(mode)")
        }
    }

    /// No test or confirm there: every mode installs by a reset, but upload-only, which never
    /// resets (DirectXIP boots the highest version at whatever reset comes next).
    @Test(arguments: Mode.allCases)
    func directXIPWithoutRevertInstallsByAResetUnlessUploadOnly(_ mode: Mode) throws {
        let plan = try MCUbootPlanner.plan(
            images: [Slots.image(Slots.b)],
            slots: [Self.factory],
            bootloaderMode: .directXIP,
            mode: mode
        )
        #expect(plan.mode == .uploadOnly)
        #expect(
            plan.steps
                == (mode == .uploadOnly
                    ? [.upload(imageIndex: 0, packageIndex: 0), .verify(.present)]
                    : [.upload(imageIndex: 0, packageIndex: 0), .reset, .verify(.active)])
        )
        #expect(plan.warnings.contains { $0.contains("upload-only") } == (mode != .uploadOnly))
    }

    @Test func directXIPUploadsTheBuildForTheInactiveSlot() throws {
        let images = [Slots.image(Slots.b, slot: 0), Slots.image(Slots.c, slot: 1)]
        // Running from slot 1: the slot-0 build goes to slot 0.
        let fromSlot1 = try MCUbootPlanner.plan(
            images: images,
            slots: [Slots.entry(nil, 1, Slots.a, "ac")],
            bootloaderMode: .directXIPWithRevert,
            mode: .testAndConfirm
        )
        #expect(fromSlot1.images.map(\.packageIndex) == [0])
        #expect(fromSlot1.images.map(\.slot) == [0])
        #expect(fromSlot1.steps.first == .upload(imageIndex: 0, packageIndex: 0))
        #expect(fromSlot1.steps.contains(.test(hash: Slots.hash(Slots.b))))
        // Running from slot 0: the slot-1 build.
        let fromSlot0 = try MCUbootPlanner.plan(
            images: images,
            slots: [Slots.entry(nil, 0, Slots.a, "ac")],
            bootloaderMode: .directXIPWithRevert,
            mode: .confirmOnly
        )
        #expect(fromSlot0.images.map(\.packageIndex) == [1])
        #expect(
            fromSlot0.steps == [
                .upload(imageIndex: 0, packageIndex: 1), .confirm(hash: Slots.hash(Slots.c)), .reset,
                .verify(.activeConfirmed),
            ]
        )
    }

    @Test func directXIPKnowsEitherBuildIsInstalled() throws {
        let images = [Slots.image(Slots.b, slot: 0), Slots.image(Slots.c, slot: 1)]
        let plan = try MCUbootPlanner.plan(
            images: images,
            slots: [Slots.entry(nil, 0, Slots.a, "c"), Slots.entry(nil, 1, Slots.c, "ac")],
            bootloaderMode: .directXIPWithRevert,
            mode: .testAndConfirm
        )
        #expect(plan.isUpToDate)
    }

    @Test func directXIPWithoutABuildForTheInactiveSlotIsRefused() {
        // Two builds, both for the running slot.
        let both = [Slots.image(Slots.b, slot: 0), Slots.image(Slots.c, slot: 0)]
        do {
            _ = try MCUbootPlanner.plan(
                images: both,
                slots: [Slots.entry(nil, 0, Slots.a, "ac")],
                bootloaderMode: .directXIPWithRevert,
                mode: .testAndConfirm
            )
            Issue.record("expected a planning failure")
        } catch {
            #expect(error.code == .invalidPackage)
        }
    }

    @Test func twoImagesShareOneReset() throws {
        let plan = try MCUbootPlanner.plan(
            images: [Slots.image(Slots.b, index: 0), Slots.image(Slots.c, index: 1)],
            slots: [Slots.entry(0, 0, Slots.a, "ac"), Slots.entry(1, 0, Slots.a, "ac")],
            bootloaderMode: .swapUsingMove,
            mode: .testAndConfirm
        )
        let b = Slots.hash(Slots.b)
        let c = Slots.hash(Slots.c)
        #expect(
            plan.steps == [
                .upload(imageIndex: 0, packageIndex: 0), .upload(imageIndex: 1, packageIndex: 1), .test(hash: b),
                .test(hash: c), .reset, .verify(.active), .confirm(hash: b), .confirm(hash: c),
                .verify(.activeConfirmed),
            ]
        )
        #expect(plan.steps.filter { $0 == .reset }.count == 1)
    }

    @Test func twoImagesWithOneAlreadyRunningUploadsTheOther() throws {
        let plan = try MCUbootPlanner.plan(
            images: [Slots.image(Slots.b, index: 0), Slots.image(Slots.c, index: 1)],
            slots: [Slots.entry(0, 0, Slots.b, "ac"), Slots.entry(1, 0, Slots.a, "ac")],
            bootloaderMode: .swapUsingMove,
            mode: .confirmOnly
        )
        #expect(plan.images.map(\.action) == [.skip, .upload])
        #expect(
            plan.steps == [
                .upload(imageIndex: 1, packageIndex: 1), .confirm(hash: Slots.hash(Slots.c)), .reset,
                .verify(.activeConfirmed),
            ]
        )
    }

    @Test func eraseAppSettingsFollowsTheUploads() throws {
        let plan = try MCUbootPlanner.plan(
            images: [Slots.image(Slots.b)],
            slots: [Self.factory],
            bootloaderMode: .swapUsingMove,
            mode: .confirmOnly,
            eraseAppSettings: true
        )
        #expect(plan.steps.prefix(2) == [.upload(imageIndex: 0, packageIndex: 0), .eraseAppSettings])
    }

    @Test func anUnknownBootloaderIsPlannedAsSwapWithAWarning() throws {
        let plan = try MCUbootPlanner.plan(
            images: [Slots.image(Slots.b)],
            slots: [Self.factory],
            bootloaderMode: nil,
            mode: .testAndConfirm
        )
        #expect(plan.steps.first == .upload(imageIndex: 0, packageIndex: 0))
        #expect(plan.warnings.contains { $0.contains("did not report") })
        #expect(MCUbootPlanner.Strategy(OSManagement.MCUbootMode(rawValue: 42)) == .swap)
    }

    @Test func unusablePackagesAndBootloadersAreRefused() {
        func code(_ images: [FirmwarePackage.Image], _ mode: OSManagement.MCUbootMode?) -> FirmwareUpgradeError.Code? {
            do {
                _ = try MCUbootPlanner.plan(
                    images: images,
                    slots: [Self.factory],
                    bootloaderMode: mode,
                    mode: .confirmOnly
                )
                return nil
            } catch {
                return error.code
            }
        }
        var noHash = Slots.image(Slots.b)
        noHash.hash = []
        #expect(code([], .swapUsingMove) == .invalidPackage)
        #expect(code([noHash], .swapUsingMove) == .invalidPackage)
    }

    // MARK: - Verification

    struct VerifyRow: Sendable, CustomTestStringConvertible {
        var name: String
        var expectation: FirmwareUpgradePlan.Expectation
        var slots: [ImageManagement.SlotState]
        var verdict: MCUbootPlanner.Verdict
        var testDescription: String { "\(name) → \(expectation)" }
    }

    static let verifyRows: [VerifyRow] = [
        VerifyRow(
            name: "running",
            expectation: .active,
            slots: [Slots.entry(nil, 0, Slots.b, "a")],
            verdict: .satisfied
        ),
        VerifyRow(
            name: "running confirmed",
            expectation: .activeConfirmed,
            slots: [Slots.entry(nil, 0, Slots.b, "ac")],
            verdict: .satisfied
        ),
        VerifyRow(
            name: "running unconfirmed",
            expectation: .activeConfirmed,
            slots: [Slots.entry(nil, 0, Slots.b, "a")],
            verdict: .failed(.imageNotConfirmed, "")
        ),
        VerifyRow(
            name: "still pending",
            expectation: .active,
            slots: [factory, Slots.entry(nil, 1, Slots.b, "p")],
            verdict: .resetNotApplied
        ),
        VerifyRow(
            name: "reverted",
            expectation: .active,
            slots: [factory, Slots.entry(nil, 1, Slots.b)],
            verdict: .failed(.imageNotActive, "")
        ),
        VerifyRow(
            name: "erased",
            expectation: .active,
            slots: [factory],
            verdict: .failed(.imageMissingAfterReset, "")
        ),
        VerifyRow(
            name: "uploaded",
            expectation: .present,
            slots: [factory, Slots.entry(nil, 1, Slots.b)],
            verdict: .satisfied
        ),
        VerifyRow(
            name: "not uploaded",
            expectation: .present,
            slots: [factory],
            verdict: .failed(.imageMissingAfterReset, "")
        ),
    ]

    @Test(arguments: verifyRows)
    func verifiesTheOutcome(_ row: VerifyRow) throws {
        let plan = try MCUbootPlanner.plan(
            images: [Slots.image(Slots.b)],
            slots: [Self.factory],
            bootloaderMode: .swapUsingMove,
            mode: .testAndConfirm
        )
        let verdict = MCUbootPlanner.verify(row.expectation, plan: plan, slots: row.slots)
        switch (verdict, row.verdict) {
        case (.failed(let code, let message), .failed(let expected, _)):
            #expect(code == expected)
            #expect(!message.isEmpty)
        default:
            #expect(verdict == row.verdict)
        }
    }

    @Test func checksTheAnswerToTestAndConfirm() {
        let b = Slots.hash(Slots.b)
        let check = MCUbootPlanner.checkMarked
        #expect(check(b, false, [Self.factory, Slots.entry(nil, 1, Slots.b, "p")]) == .satisfied)
        #expect(check(b, true, [Self.factory, Slots.entry(nil, 1, Slots.b, "pP")]) == .satisfied)
        #expect(check(b, true, [Slots.entry(nil, 0, Slots.b, "ac")]) == .satisfied)
        if case .failed(let code, _) = check(b, false, [Self.factory, Slots.entry(nil, 1, Slots.b)]) {
            #expect(code == .imageNotMarked)
        } else {
            Issue.record("a test that leaves the image unmarked must fail")
        }
        if case .failed(let code, _) = check(b, true, [Self.factory, Slots.entry(nil, 1, Slots.b, "p")]) {
            #expect(code == .imageNotMarked)
        } else {
            Issue.record("a confirm that leaves the image non-permanent must fail")
        }
        if case .failed(let code, _) = check(b, true, [Self.factory]) {
            #expect(code == .imageMissingAfterReset)
        } else {
            Issue.record("a missing image must fail")
        }
    }

    /// A device whose bootloader refuses downgrades: an older image is refused before anything
    /// is written (major.minor.revision, as MCUboot compares; an equal version passes), or planned
    /// with a warning when the caller insists.
    @Test(arguments: [("1.0.0", true), ("1.9.9", true), ("2.0.0", false), ("2.0.0+9", false), ("2.1.0", false)])
    func aDeviceThatRefusesDowngradesRefusesAnOlderImageBeforeUploading(_ version: String, _ older: Bool) throws {
        let running = ImageManagement.SlotState(
            image: nil,
            slot: 0,
            version: "2.0.0",
            hash: Data(Slots.hash(Slots.a)),
            bootable: true,
            pending: false,
            confirmed: true,
            active: true,
            permanent: false
        )
        let images = [Slots.image(Slots.b, version: version)]
        func plan(noDowngrade: Bool, allow: Bool = false) throws(PlanningFailure) -> FirmwareUpgradePlan {
            try MCUbootPlanner.plan(
                images: images,
                slots: [running],
                bootloaderMode: .swapUsingMove,
                mode: .confirmOnly,
                noDowngrade: noDowngrade,
                allowDowngrade: allow
            )
        }
        if older {
            do {
                let plan = try plan(noDowngrade: true)
                Issue.record("an older image was planned: \(plan.steps)")
            } catch {
                #expect(error.code == .downgradeRefused)
                #expect(error.message.contains("older than the running 2.0.0"))
                #expect(error.message.contains("nothing was uploaded"))
            }
            let insisted = try plan(noDowngrade: true, allow: true)
            #expect(insisted.steps.first == .upload(imageIndex: 0, packageIndex: 0))
            #expect(insisted.warnings.contains { $0.contains("will erase it") })
        } else {
            #expect(try plan(noDowngrade: true).steps.first == .upload(imageIndex: 0, packageIndex: 0))
        }
        // A device that does not refuse downgrades gets the upload either way.
        #expect(try plan(noDowngrade: false).steps.first == .upload(imageIndex: 0, packageIndex: 0))
    }
}
