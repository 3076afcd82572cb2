import Foundation
import MCUboot
import MCUmgr
import SMPCore

/// The decisions of an MCUboot upgrade, as pure functions: slot list + bootloader mode + package
/// images → a ``FirmwareUpgradePlan``; a fresh slot list + an expectation → a verdict. No I/O, no
/// time, so every case is a row in a table test.
///
/// The slot model (`smp-protocol.md` §5.1, §15): per image number, the device lists the slots
/// holding a valid image with `active` (running), `confirmed`, `pending` (boots next) and
/// `permanent` (boots next for good). An upload goes to the slot that is not running (slot 1
/// with swap and overwrite bootloaders, the inactive slot with DirectXIP), and is refused while
/// that slot holds another image marked for the next boot.
package struct MCUbootPlanner: UpgradePlanner {
    /// How the bootloader applies an update, derived from the reported MCUboot mode.
    package enum Strategy: String, Sendable, Hashable, CustomStringConvertible {
        /// Swap using scratch, move or offset (and an unknown mode): test, permanent, revert.
        case swap
        /// Overwrite only: the update is copied over the primary slot at the next boot; no revert.
        case overwriteOnly = "overwrite-only"
        /// DirectXIP without revert, and RAM load: the highest version boots from its own slot
        /// (or is loaded into RAM); no test/confirm.
        case directXIP = "direct-xip"
        /// DirectXIP with revert: as DirectXIP, with test and confirm.
        case directXIPWithRevert = "direct-xip-revert"
        /// One application slot per image (single application, firmware loader): updated from
        /// the bootloader — serial recovery or the loader — entered with `boot_mode` 1.
        case singleSlot = "single-slot"

        /// The strategy for a reported mode; `nil` (the device did not answer) and unknown values
        /// are treated as swap, the most common build.
        ///
        /// RAM load picks the highest valid version and does not read the trailers test and
        /// confirm write (Zephyr reports its slots through the swap type, which that bootloader
        /// does not act on), so it is updated as DirectXIP without revert: upload, reset.
        package init(_ mode: OSManagement.MCUbootMode?) {
            switch mode {
            case .overwriteOnly?: self = .overwriteOnly
            case .directXIP?, .ramLoad?: self = .directXIP
            case .directXIPWithRevert?: self = .directXIPWithRevert
            case .singleApplication?, .firmwareLoader?, .singleSlotRAMLoad?: self = .singleSlot
            default: self = .swap
            }
        }

        /// The bootloader boots the highest version of two executable slots: the upload goes to
        /// the one not running, and an older image never boots.
        package var isDirectXIP: Bool { self == .directXIP || self == .directXIPWithRevert }

        /// The bootloader copies images at boot, which takes the swap time.
        package var copiesAtBoot: Bool { self == .swap || self == .overwriteOnly }

        package var description: String { rawValue }
    }

    /// The package's MCUboot images (several per image number with DirectXIP: one per slot it
    /// was linked for).
    package let images: [FirmwarePackage.Image]

    /// Creates a planner.
    /// - Parameter images: the package's MCUboot images.
    package init(images: [FirmwarePackage.Image]) {
        self.images = images
    }

    package var needsImageList: Bool { true }

    package func plan(_ context: PlanningContext) throws(PlanningFailure) -> FirmwareUpgradePlan {
        if let warnings = Self.updateThroughBootloader(context) {
            return try Self.planSingleSlot(
                images: images,
                slots: context.slots,
                bootloaderMode: context.bootloaderMode,
                mode: context.configuration.mode,
                eraseAppSettings: context.configuration.eraseAppSettings,
                requireBootloader: context.configuration.recovery,
                warnings: warnings
            )
        }
        var plan = try Self.plan(
            images: images,
            slots: context.slots,
            bootloaderMode: context.bootloaderMode,
            mode: context.configuration.mode,
            eraseAppSettings: context.configuration.eraseAppSettings,
            noDowngrade: context.noDowngrade,
            allowDowngrade: context.configuration.allowDowngrade,
            corrupted: context.corrupted,
            revertPending: context.configuration.revertPending
        )
        if let capacities = context.slotCapacities {
            plan.warnings += try Self.checkCapacity(plan, images: images, capacities: capacities)
        }
        return plan
    }

    /// Plans an MCUboot upgrade.
    /// - Parameters:
    ///   - images: the package's MCUboot images (several per image number with DirectXIP: one per
    ///     slot it was linked for).
    ///   - slots: the device's image list.
    ///   - bootloaderMode: the reported MCUboot mode, or `nil` if the device did not say.
    ///   - mode: the requested mode.
    ///   - eraseAppSettings: erase settings after the upload.
    ///   - noDowngrade: the device reported that its bootloader refuses downgrades.
    ///   - allowDowngrade: plan an image older than the running one anyway (with a warning).
    ///   - corrupted: images (by position in `images`) whose upload the device's hash check
    ///     rejected: uploaded again even though the slot shows their hash.
    ///   - revertPending: a running test image in the way may be reverted by a reset.
    /// - Returns: the plan.
    /// - Throws: ``PlanningFailure`` for an empty package, an image without hash, an image
    ///   older than the running one on a device that refuses downgrades or boots the highest
    ///   version, or a slot held by an image the next reset acts on that the upgrade may not
    ///   reset for (`slotBusy`). Single-slot bootloaders are planned by
    ///   ``planSingleSlot(images:slots:bootloaderMode:mode:eraseAppSettings:requireBootloader:warnings:)``.
    package static func plan(
        images: [FirmwarePackage.Image],
        slots: [ImageManagement.SlotState],
        bootloaderMode: OSManagement.MCUbootMode?,
        mode requested: FirmwareUpgrade.Mode,
        eraseAppSettings: Bool = false,
        noDowngrade: Bool = false,
        allowDowngrade: Bool = false,
        corrupted: Set<Int> = [],
        revertPending: Bool = false
    ) throws(PlanningFailure) -> FirmwareUpgradePlan {
        let strategy = Strategy(bootloaderMode)
        try checkPackage(images)
        if strategy == .singleSlot {
            return try planSingleSlot(
                images: images,
                slots: slots,
                bootloaderMode: bootloaderMode,
                mode: requested,
                eraseAppSettings: eraseAppSettings,
                requireBootloader: false,
                warnings: []
            )
        }
        var (mode, installsByReset, warnings) = effectiveMode(requested, strategy, bootloaderMode)
        let context = ImageContext(
            images: images,
            slots: slots,
            strategy: strategy,
            mode: mode,
            noDowngrade: noDowngrade,
            allowDowngrade: allowDowngrade,
            corrupted: corrupted
        )
        var decisions: [ImageDecision] = []
        for index in images.map(\.imageIndex).reduce(into: [Int](), { if !$0.contains($1) { $0.append($1) } }) {
            decisions.append(try decide(index, context))
        }
        let plans = decisions.map(\.plan)
        warnings += decisions.flatMap(\.warnings)
        let steps = steps(
            for: plans,
            mode: mode,
            installsByReset: installsByReset,
            eraseAppSettings: eraseAppSettings
        )
        var held = decisions.compactMap(\.held)
        // A reset for the other images would revert an image running unconfirmed.
        if steps.contains(.reset) && strategy != .directXIP { held += decisions.compactMap(\.revertedByReset) }
        guard held.isEmpty else {
            return try planRevert(
                held,
                plans: plans,
                mode: mode,
                bootloaderMode: bootloaderMode,
                warnings: warnings,
                revertPending: revertPending
            )
        }
        return FirmwareUpgradePlan(
            mode: mode,
            bootloaderMode: bootloaderMode,
            images: plans,
            steps: steps,
            warnings: warnings
        )
    }

    /// The mode a bootloader can carry out: without revert a DirectXIP or RAM-load bootloader has
    /// no test or confirm, so the reset installs (asked for upload-only, the upload is all there
    /// is: no reset).
    /// - Returns: the mode, whether the reset installs, and the warnings that say why.
    static func effectiveMode(
        _ requested: FirmwareUpgrade.Mode,
        _ strategy: Strategy,
        _ bootloaderMode: OSManagement.MCUbootMode?
    ) -> (FirmwareUpgrade.Mode, installsByReset: Bool, warnings: [String]) {
        var warnings: [String] = []
        var mode = requested
        let installsByReset = strategy == .directXIP && requested != .uploadOnly
        if installsByReset {
            let name = bootloaderMode == .ramLoad ? "RAM load" : "DirectXIP without revert"
            warnings.append("\(name) has no test or confirm: \(mode) becomes upload-only (upload, reset)")
            mode = .uploadOnly
        }
        if bootloaderMode == nil {
            warnings.append("the device did not report its bootloader mode; assuming a swap bootloader")
        }
        return (mode, installsByReset, warnings)
    }

    /// Refuses a package the device could not report on: no image, or an image without the
    /// SHA-256 hash TLV the image list shows.
    static func checkPackage(_ images: [FirmwarePackage.Image]) throws(PlanningFailure) {
        guard !images.isEmpty else {
            throw PlanningFailure(code: .invalidPackage, message: "the package holds no MCUboot image")
        }
        if let bad = images.first(where: { $0.hash.count != 32 }) {
            throw PlanningFailure(
                code: .invalidPackage,
                message: "\(bad.fileName) has no SHA-256 hash TLV; the device could not report it"
            )
        }
    }
}
