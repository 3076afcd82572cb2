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
        return try Self.plan(
            images: images,
            slots: context.slots,
            bootloaderMode: context.bootloaderMode,
            mode: context.configuration.mode,
            eraseAppSettings: context.configuration.eraseAppSettings,
            noDowngrade: context.noDowngrade,
            allowDowngrade: context.configuration.allowDowngrade,
            corrupted: context.corrupted
        )
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
    /// - Returns: the plan.
    /// - Throws: ``PlanningFailure`` for an empty package, an image without hash, or an image
    ///   older than the running one on a device that refuses downgrades or boots the highest
    ///   version. Single-slot bootloaders are planned by
    ///   ``planSingleSlot(images:slots:bootloaderMode:mode:eraseAppSettings:requireBootloader:warnings:)``.
    package static func plan(
        images: [FirmwarePackage.Image],
        slots: [ImageManagement.SlotState],
        bootloaderMode: OSManagement.MCUbootMode?,
        mode requested: FirmwareUpgrade.Mode,
        eraseAppSettings: Bool = false,
        noDowngrade: Bool = false,
        allowDowngrade: Bool = false,
        corrupted: Set<Int> = []
    ) throws(PlanningFailure) -> FirmwareUpgradePlan {
        let strategy = Strategy(bootloaderMode)
        var warnings: [String] = []
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
        var mode = requested
        if strategy == .directXIP && mode != .uploadOnly {
            let name = bootloaderMode == .ramLoad ? "RAM load" : "DirectXIP without revert"
            warnings.append("\(name) has no test or confirm: \(mode) becomes upload-only (upload, reset)")
            mode = .uploadOnly
        }
        if bootloaderMode == nil {
            warnings.append("the device did not report its bootloader mode; assuming a swap bootloader")
        }

        var plans: [FirmwareUpgradePlan.ImagePlan] = []
        var needsResetFirst: [String] = []
        // Images running unconfirmed from an earlier test, left as they are (test-only).
        var unconfirmedRunning: [Int] = []
        let indices = images.map(\.imageIndex).reduce(into: [Int]()) { if !$0.contains($1) { $0.append($1) } }
        for index in indices {
            let candidates = images.enumerated().filter { $0.element.imageIndex == index }
            let entries = slots.filter { Int($0.imageNumber) == index }
            let active = entries.first { $0.isActive }
            let activeSlot = active.map { Int($0.slot) } ?? 0

            // Already on the device?
            // A slot lists the hash from the image's TLVs, not from its bytes: after a failed
            // device hash check it may show a hash whose image is not really there.
            if let (offset, image, entry) = match(candidates, entries), entry.isActive || !corrupted.contains(offset) {
                let slot = Int(entry.slot)
                func make(_ action: FirmwareUpgradePlan.ImagePlan.Action, _ reason: String)
                    -> FirmwareUpgradePlan.ImagePlan
                {
                    .init(
                        imageIndex: index,
                        packageIndex: offset,
                        hash: image.hash,
                        version: image.version?.description ?? entry.version,
                        slot: slot,
                        action: action,
                        reason: reason
                    )
                }
                if entry.isActive {
                    if entry.isConfirmed || strategy == .directXIP {
                        plans.append(make(.skip, "already running and confirmed in slot \(slot)"))
                    } else if mode == .testAndConfirm || mode == .confirmOnly {
                        plans.append(
                            make(.confirmRunning, "running in slot \(slot) but not confirmed (an earlier test)")
                        )
                    } else {
                        plans.append(make(.skip, "already running (unconfirmed) in slot \(slot)"))
                        unconfirmedRunning.append(index)
                    }
                    continue
                }
                // In the other slot.
                if entry.isConfirmed && !entry.isPending {
                    // The image a revert brings back: the running image is an unconfirmed test.
                    needsResetFirst.append(
                        "image \(index): it is the revert target in slot \(slot); a reset brings it back"
                    )
                    plans.append(make(.alreadyMarked, "in slot \(slot), will come back at the next reset (revert)"))
                    continue
                }
                switch mode {
                case .uploadOnly:
                    if strategy == .directXIP && !entry.isPending {
                        plans.append(
                            make(.alreadyUploaded, "already in slot \(slot) but lower than the running version")
                        )
                    } else if strategy == .directXIP {
                        plans.append(make(.alreadyMarked, "already in slot \(slot), boots next"))
                    } else {
                        plans.append(make(.skip, "already uploaded to slot \(slot)"))
                    }
                case .testOnly, .testAndConfirm:
                    if entry.isPending {
                        plans.append(make(.alreadyMarked, "already in slot \(slot) and pending"))
                    } else {
                        plans.append(make(.alreadyUploaded, "already uploaded to slot \(slot)"))
                    }
                case .confirmOnly:
                    if entry.isPermanent {
                        plans.append(make(.alreadyMarked, "already in slot \(slot) and confirmed for the next boot"))
                    } else {
                        plans.append(make(.alreadyUploaded, "already uploaded to slot \(slot)"))
                    }
                }
                continue
            }

            // Needs an upload. A bootloader that refuses downgrades would erase an older image at
            // the next boot, one that boots the highest version would never boot it: refuse
            // before anything is written.
            if noDowngrade || strategy.isDirectXIP, let older = downgrade(candidates.map(\.element), running: active) {
                let why =
                    noDowngrade
                    ? "the device refuses downgrades (MCUboot's downgrade prevention)"
                    : "the bootloader boots the highest version"
                let text = "image \(index): \(older.new) is older than the running \(older.running) and \(why)"
                guard allowDowngrade else {
                    throw PlanningFailure(
                        code: .downgradeRefused,
                        message: "\(text); nothing was uploaded (--allow-downgrade tries anyway)"
                    )
                }
                warnings.append(
                    "\(text): the bootloader will \(noDowngrade ? "erase it instead of booting it" : "not boot it")"
                )
            }
            // Pick the build for the target slot and check that slot is free.
            let target = strategy.isDirectXIP ? 1 - activeSlot : 1
            let chosen = candidates.first { $0.element.slot == target } ?? candidates[0]
            if strategy.isDirectXIP && candidates.count > 1 && chosen.element.slot != target {
                throw PlanningFailure(
                    code: .invalidPackage,
                    message:
                        "image \(index) runs from slot \(activeSlot) and the package has no build for slot \(target)"
                )
            }
            if strategy.isDirectXIP && candidates.count == 1 && chosen.element.slot != target
                && chosen.element.manifestEntry != nil
            {
                warnings.append(
                    "image \(index): the package's build is for slot \(chosen.element.slot) but the device will place it in slot \(target)"
                )
            }
            if let occupant = entries.first(where: { Int($0.slot) == target }), !occupant.isActive,
                occupant.isPending || occupant.isConfirmed
            {
                let what =
                    occupant.isPending
                    ? (occupant.isPermanent ? "confirmed for the next boot" : "pending (test)") : "the revert target"
                needsResetFirst.append("image \(index): slot \(target) holds version \(occupant.version), \(what)")
            }
            plans.append(
                .init(
                    imageIndex: index,
                    packageIndex: chosen.offset,
                    hash: chosen.element.hash,
                    version: chosen.element.version?.description,
                    slot: target,
                    action: .upload,
                    reason: "not on the device; upload to slot \(target)"
                )
            )
        }

        // A reset for the other images would revert an image running unconfirmed: revert it
        // first, so that it is tested again together with them, under the one reset.
        let resets = plans.contains {
            $0.action == .upload || $0.action == .alreadyUploaded || $0.action == .alreadyMarked
        }
        if resets && strategy != .directXIP {
            for index in unconfirmedRunning {
                needsResetFirst.append(
                    "image \(index): runs unconfirmed from an earlier test, and the reset the other images need would revert it; it is reverted first and tested again with them"
                )
            }
        }
        if !needsResetFirst.isEmpty {
            warnings += needsResetFirst
            return FirmwareUpgradePlan(
                mode: mode,
                bootloaderMode: bootloaderMode,
                images: plans,
                steps: [.resetBeforeUpload],
                warnings: warnings
            )
        }
        return FirmwareUpgradePlan(
            mode: mode,
            bootloaderMode: bootloaderMode,
            images: plans,
            steps: steps(for: plans, mode: mode, strategy: strategy, eraseAppSettings: eraseAppSettings),
            warnings: warnings
        )
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

    /// The command sequence for per-image decisions.
    static func steps(
        for plans: [FirmwareUpgradePlan.ImagePlan],
        mode: FirmwareUpgrade.Mode,
        strategy: Strategy,
        eraseAppSettings: Bool
    ) -> [FirmwareUpgradePlan.Step] {
        var steps: [FirmwareUpgradePlan.Step] = []
        let uploads = plans.filter { $0.action == .upload }
        for plan in uploads { steps.append(.upload(imageIndex: plan.imageIndex, packageIndex: plan.packageIndex)) }
        if eraseAppSettings && !uploads.isEmpty { steps.append(.eraseAppSettings) }
        let fresh = plans.filter { $0.action == .upload || $0.action == .alreadyUploaded }
        let marked = plans.filter { $0.action == .alreadyMarked }
        let running = plans.filter { $0.action == .confirmRunning }
        let needsReset = !fresh.isEmpty || !marked.isEmpty
        switch mode {
        case .uploadOnly:
            if strategy == .directXIP {
                if needsReset { steps += [.reset, .verify(.active)] }
            } else if !uploads.isEmpty {
                steps.append(.verify(.present))
            }
        case .testOnly:
            for plan in fresh { steps.append(.test(hash: plan.hash)) }
            if needsReset { steps += [.reset, .verify(.active)] }
        case .confirmOnly:
            for plan in fresh + running { steps.append(.confirm(hash: plan.hash)) }
            if needsReset {
                steps += [.reset, .verify(.activeConfirmed)]
            } else if !running.isEmpty {
                steps.append(.verify(.activeConfirmed))
            }
        case .testAndConfirm:
            // An image already running from an earlier test came up: confirm it before the
            // reset, which would otherwise revert it.
            if needsReset { for plan in running { steps.append(.confirm(hash: plan.hash)) } }
            for plan in fresh { steps.append(.test(hash: plan.hash)) }
            if needsReset { steps += [.reset, .verify(.active)] }
            for plan in fresh + marked + (needsReset ? [] : running) { steps.append(.confirm(hash: plan.hash)) }
            if needsReset || !running.isEmpty { steps.append(.verify(.activeConfirmed)) }
        }
        return steps
    }

    /// The versions, when every build of the image is older (major.minor.revision, as MCUboot
    /// compares them) than the one running.
    private static func downgrade(
        _ candidates: [FirmwarePackage.Image],
        running: ImageManagement.SlotState?
    ) -> (new: ImageVersion, running: ImageVersion)? {
        guard let running, let current = ImageVersion(running.version),
            let newest = candidates.compactMap(\.version).max(),
            candidates.allSatisfy({ $0.version != nil }),
            newest.withoutBuild < current.withoutBuild
        else { return nil }
        return (newest, current)
    }

    private static func match(
        _ candidates: [(offset: Int, element: FirmwarePackage.Image)],
        _ entries: [ImageManagement.SlotState]
    ) -> (Int, FirmwarePackage.Image, ImageManagement.SlotState)? {
        // Prefer the running slot, then the other.
        for entry in entries.sorted(by: { $0.isActive && !$1.isActive }) {
            guard let hash = entry.hash else { continue }
            if let found = candidates.first(where: { $0.element.hash == Array(hash) }) {
                return (found.offset, found.element, entry)
            }
        }
        return nil
    }

    // MARK: - Checking answers and outcomes

    /// The verdict on an image list.
    package enum Verdict: Sendable, Hashable {
        /// The list shows what was expected.
        case satisfied
        /// An image is still pending where it should run: the reset did not happen.
        case resetNotApplied
        /// The device is not in the promised state.
        case failed(FirmwareUpgradeError.Code, String)
    }

    /// Checks the image list after a step against what the plan promises.
    /// - Parameters:
    ///   - expectation: what every acted-on image must show.
    ///   - plan: the plan.
    ///   - slots: the fresh image list.
    /// - Returns: the verdict for the first image that falls short, or ``Verdict/satisfied``.
    package static func verify(
        _ expectation: FirmwareUpgradePlan.Expectation,
        plan: FirmwareUpgradePlan,
        slots: [ImageManagement.SlotState]
    ) -> Verdict {
        // Nothing runs: the device is still (or again) in its bootloader — too early to tell,
        // or MCUboot did not start the application; the reboot watch decides which.
        if expectation == .active || expectation == .activeConfirmed, !slots.contains(where: \.isActive) {
            return .resetNotApplied
        }
        // Every image of the package, skipped ones included: the reset may have changed them too
        // (an image running unconfirmed reverts), and the promise is about all of them.
        for image in plan.images {
            let entries = slots.filter { Int($0.imageNumber) == image.imageIndex }
            let holding = entries.filter { $0.hash.map(Array.init) == image.hash }
            let name = "image \(image.imageIndex)\(image.version.map { " version \($0)" } ?? "")"
            if expectation == .listed {
                guard holding.isEmpty else { continue }
                return .failed(
                    .imageMissingAfterReset,
                    "\(name) is not listed after its upload: the bootloader lists only images whose hash and signature it accepts, so it would not boot it (signed with a key it does not trust?); nothing was reset"
                )
            }
            guard let entry = holding.first(where: { $0.isActive }) ?? holding.first else {
                let running = entries.first { $0.isActive }.map { " (slot \($0.slot) runs \($0.version))" } ?? ""
                return .failed(
                    .imageMissingAfterReset,
                    "\(name) is no longer on the device\(running): the bootloader erased it (invalid hash or signature, or a refused downgrade)"
                )
            }
            if expectation == .present { continue }
            if !entry.isActive {
                if entry.isPending { return .resetNotApplied }
                let running =
                    entries.first { $0.isActive }.map { "slot \($0.slot) runs \($0.version)" } ?? "nothing runs"
                return .failed(
                    .imageNotActive,
                    "\(name) is in slot \(entry.slot) but does not run; \(running): the bootloader reverted it or chose a higher version"
                )
            }
            if expectation == .activeConfirmed && !entry.isConfirmed {
                return .failed(
                    .imageNotConfirmed,
                    "\(name) runs but is not confirmed; it would revert at the next reset"
                )
            }
        }
        return .satisfied
    }

    /// Checks the list a test or confirm answered with: the image must be marked for the next
    /// boot (pending; permanent when confirmed), or run (confirmed, when confirmed).
    /// - Parameters:
    ///   - hash: the image tested or confirmed.
    ///   - confirm: whether it was a confirm.
    ///   - slots: the answer's list.
    /// - Returns: the verdict.
    package static func checkMarked(
        hash: [UInt8],
        confirm: Bool,
        slots: [ImageManagement.SlotState]
    ) -> Verdict {
        guard let entry = slots.first(where: { $0.hash.map(Array.init) == hash }) else {
            return .failed(.imageMissingAfterReset, "the device no longer lists the image it was asked to mark")
        }
        let name = "image \(entry.imageNumber) version \(entry.version)"
        if entry.isActive {
            if !confirm || entry.isConfirmed { return .satisfied }
            return .failed(.imageNotConfirmed, "\(name) runs but the device did not confirm it")
        }
        if entry.isPending && (!confirm || entry.isPermanent) { return .satisfied }
        return .failed(
            .imageNotMarked,
            "\(name) was accepted but is not \(confirm ? "confirmed for" : "pending for") the next boot: the bootloader will not boot it (a downgrade, or not newer than the running image)"
        )
    }
}
