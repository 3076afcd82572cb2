import MCUboot
import SMPCore

/// Single-slot devices (MCUboot modes 0, 7 and 8, or a device in serial recovery): the
/// application cannot overwrite the slot it runs from, so the update is written by the
/// bootloader's serial recovery or by the firmware loader, entered with `boot_mode` 1.
extension MCUbootPlanner {
    /// Whether a device that did not report a single-slot bootloader is updated through its
    /// serial recovery all the same, and why: ``FirmwareUpgrade/Configuration/recovery``, or a
    /// device that answers like serial recovery (no bootloader info, nothing running).
    /// - Returns: `nil` when the upgrade is planned by mode; otherwise the warnings that go with
    ///   the plan (none when the caller asked for the recovery).
    static func updateThroughBootloader(_ context: PlanningContext) -> [String]? {
        if context.configuration.recovery { return [] }
        if context.bootloaderMode == nil && !context.slots.contains(where: \.isActive) {
            return [
                "nothing runs on the device and it has no bootloader info: it answers like MCUboot's serial recovery; updating it through the recovery"
            ]
        }
        return nil
    }

    /// Whether the device's own application runs: a slot 0 is `active`. Serial recovery reports
    /// no `active` at all; the firmware loader runs from a slot of its own.
    static func applicationRuns(_ slots: [ImageManagement.SlotState]) -> Bool {
        slots.contains { $0.isActive && $0.slot == 0 }
    }

    /// Plans a single-slot upgrade: enter the bootloader (unless it already runs), upload each
    /// image to its primary slot, check that the bootloader lists it, reset, verify it runs.
    ///
    /// There is no test and no revert with one slot: every mode but upload-only installs for good
    /// (a warning says so). Upload-only never resets: it is refused while the application runs
    /// (the bootloader is entered by a reset), and on a device already in its bootloader it
    /// uploads and leaves the device there.
    /// - Parameters:
    ///   - images: the package's images (one per image number; a build for slot 0 is preferred).
    ///   - slots: the image list of the application, serial recovery or the firmware loader.
    ///   - bootloaderMode: the reported mode, if any.
    ///   - mode: the requested mode.
    ///   - eraseAppSettings: erase settings after the upload (where the bootloader has it).
    ///   - requireBootloader: the caller says the device is in serial recovery.
    ///   - warnings: warnings already due.
    /// - Returns: the plan.
    /// - Throws: ``PlanningFailure`` for an empty package, an image without a hash, an
    ///   application running when serial recovery was expected, or upload-only while the
    ///   application runs.
    static func planSingleSlot(
        images: [FirmwarePackage.Image],
        slots: [ImageManagement.SlotState],
        bootloaderMode: OSManagement.MCUbootMode?,
        mode requested: FirmwareUpgrade.Mode,
        eraseAppSettings: Bool,
        requireBootloader: Bool,
        warnings: [String]
    ) throws(PlanningFailure) -> FirmwareUpgradePlan {
        try checkPackage(images)
        let running = applicationRuns(slots)
        var warnings = warnings
        if requireBootloader && running {
            // Already done (an earlier run finished, the recovery reset included): nothing to do.
            let done = images.allSatisfy { image in
                slots.contains { $0.isActive && $0.hash.map(Array.init) == image.hash }
            }
            guard done else {
                let entry = slots.first { $0.isActive }
                throw PlanningFailure(
                    code: .bootloaderNotEntered,
                    message:
                        "the device runs its application (version \(entry?.version ?? "?")), not serial recovery: run the upgrade without --recovery"
                )
            }
            warnings.append("the device runs its application, not serial recovery; it already runs the package")
        }
        switch requested {
        case .testOnly, .testAndConfirm:
            warnings.append("a single-slot bootloader has no test or revert: \(requested) installs the image for good")
        case .uploadOnly:
            if !running { warnings.append("upload-only: the device stays in its bootloader until it is reset") }
        case .confirmOnly:
            break
        }
        let plans = singleSlotImagePlans(images: images, slots: slots, running: running)
        var steps: [FirmwareUpgradePlan.Step] = []
        if requested == .uploadOnly && running && plans.contains(where: { $0.action != .skip }) {
            throw PlanningFailure(
                code: .unsupported,
                message:
                    "upload-only cannot update a single-slot device without resetting it: its only slot is written from the bootloader, which a reset enters and another leaves; nothing was changed (use mode confirm-only: with one slot every mode installs for good)"
            )
        }
        if plans.contains(where: { $0.action != .skip }) {
            if running { steps.append(.enterBootloader) }
            let uploads = plans.filter { $0.action == .upload }
            steps += uploads.map { .upload(imageIndex: $0.imageIndex, packageIndex: $0.packageIndex) }
            steps.append(.verify(.listed))
            if eraseAppSettings && !uploads.isEmpty { steps.append(.eraseAppSettings) }
            if requested != .uploadOnly { steps += [.reset, .verify(.active)] }
        }
        return FirmwareUpgradePlan(
            mode: requested == .uploadOnly ? .uploadOnly : .confirmOnly,
            bootloaderMode: bootloaderMode,
            images: plans,
            steps: steps,
            warnings: warnings,
            throughBootloader: true
        )
    }

    /// One plan per image number: the image linked for slot 0 (or the first), skipped when it
    /// runs, already uploaded when the slot holds it, otherwise uploaded.
    static func singleSlotImagePlans(
        images: [FirmwarePackage.Image],
        slots: [ImageManagement.SlotState],
        running: Bool
    ) -> [FirmwareUpgradePlan.ImagePlan] {
        var plans: [FirmwareUpgradePlan.ImagePlan] = []
        let indices = images.map(\.imageIndex).reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
        for index in indices {
            let candidates = images.enumerated().filter { $0.element.imageIndex == index }
            let chosen = candidates.first { $0.element.slot == 0 } ?? candidates[0]
            let image = chosen.element
            let primary = slots.first { Int($0.imageNumber) == index && $0.slot == 0 }
            let held = primary?.hash.map(Array.init) == image.hash
            let (action, reason): (FirmwareUpgradePlan.ImagePlan.Action, String) =
                switch (held, primary?.isActive ?? false) {
                case (true, true): (.skip, "already running")
                case (true, false): (.alreadyUploaded, "already in the application slot; a reset boots it")
                default:
                    (
                        .upload,
                        running
                            ? "upload from the bootloader to the application slot" : "upload to the application slot"
                    )
                }
            plans.append(
                .init(
                    imageIndex: index,
                    packageIndex: chosen.offset,
                    hash: image.hash,
                    version: image.version?.description,
                    slot: 0,
                    action: action,
                    reason: reason
                )
            )
        }
        return plans
    }
}
