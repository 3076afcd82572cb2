import MCUboot
import MCUmgr
import SMPCore

/// The decision for one image number: already on the device (and in which state), or an upload,
/// and what in the target slot the next reset would act on.
extension MCUbootPlanner {
    /// What every image's decision reads.
    struct ImageContext {
        var images: [FirmwarePackage.Image]
        var slots: [ImageManagement.SlotState]
        var strategy: Strategy
        /// The mode in force (DirectXIP without revert forces upload-only).
        var mode: FirmwareUpgrade.Mode
        var noDowngrade: Bool
        var allowDowngrade: Bool
        var corrupted: Set<Int>
    }

    /// One image number's decision.
    struct ImageDecision {
        var plan: FirmwareUpgradePlan.ImagePlan
        /// The target slot is held by an image the next reset acts on.
        var held: FirmwareUpgradePlan.PendingBootChange?
        /// The package's image runs unconfirmed and is left as it is: a reset the other images
        /// need would revert it.
        var revertedByReset: FirmwareUpgradePlan.PendingBootChange?
        var warnings: [String] = []
    }

    static func decide(_ index: Int, _ context: ImageContext) throws(PlanningFailure) -> ImageDecision {
        let candidates = context.images.enumerated().filter { $0.element.imageIndex == index }
        let entries = context.slots.filter { Int($0.imageNumber) == index }
        // A slot lists the hash from the image's TLVs, not from its bytes: after a failed device
        // hash check it may show a hash whose image is not really there.
        if let (offset, image, entry) = match(candidates, entries),
            entry.isActive || !context.corrupted.contains(offset)
        {
            return onDevice(index, offset: offset, image: image, entry: entry, entries: entries, context)
        }
        return try upload(index, candidates: candidates, entries: entries, context)
    }

    /// The package's image is already in a slot.
    private static func onDevice(
        _ index: Int,
        offset: Int,
        image: FirmwarePackage.Image,
        entry: ImageManagement.SlotState,
        entries: [ImageManagement.SlotState],
        _ context: ImageContext
    ) -> ImageDecision {
        let slot = Int(entry.slot)
        func make(_ action: FirmwarePlanAction, _ reason: String) -> FirmwareUpgradePlan.ImagePlan {
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
        let mode = context.mode
        if entry.isActive {
            if entry.isConfirmed || context.strategy == .directXIP {
                return ImageDecision(plan: make(.skip, "already running and confirmed in slot \(slot)"))
            }
            if mode == .testAndConfirm || mode == .confirmOnly {
                return ImageDecision(
                    plan: make(.confirmRunning, "running in slot \(slot) but not confirmed (an earlier test)")
                )
            }
            return ImageDecision(
                plan: make(.skip, "already running (unconfirmed) in slot \(slot)"),
                revertedByReset: revertTarget(in: entries, running: entry)
            )
        }
        if let change = pendingChange(entry, entries: entries), change.kind == .revert {
            // The image a revert brings back: another image runs unconfirmed. It is on the
            // device, which is all upload-only promises; the other modes need the revert.
            if mode == .uploadOnly {
                return ImageDecision(plan: make(.skip, "in slot \(slot), the image the next reset reverts to"))
            }
            return ImageDecision(
                plan: make(.alreadyMarked, "in slot \(slot), comes back at the next reset (a revert)"),
                held: change
            )
        }
        return ImageDecision(plan: inOtherSlot(entry, mode: mode, strategy: context.strategy, make))
    }

    private typealias FirmwarePlanAction = FirmwareUpgradePlan.ImagePlan.Action

    /// The package's image waits in the slot that is not running.
    private static func inOtherSlot(
        _ entry: ImageManagement.SlotState,
        mode: FirmwareUpgrade.Mode,
        strategy: Strategy,
        _ make: (FirmwarePlanAction, String) -> FirmwareUpgradePlan.ImagePlan
    ) -> FirmwareUpgradePlan.ImagePlan {
        let slot = entry.slot
        switch mode {
        case .uploadOnly:
            if strategy == .directXIP && !entry.isPending {
                return make(.alreadyUploaded, "already in slot \(slot) but lower than the running version")
            } else if strategy == .directXIP {
                return make(.alreadyMarked, "already in slot \(slot), boots next")
            }
            return make(.skip, "already uploaded to slot \(slot)")
        case .testOnly, .testAndConfirm:
            return entry.isPending
                ? make(.alreadyMarked, "already in slot \(slot) and pending")
                : make(.alreadyUploaded, "already uploaded to slot \(slot)")
        case .confirmOnly:
            return entry.isPermanent
                ? make(.alreadyMarked, "already in slot \(slot) and confirmed for the next boot")
                : make(.alreadyUploaded, "already uploaded to slot \(slot)")
        }
    }

    /// The package's image is not on the device: upload it (downgrades checked first) to the slot
    /// not running, and note what in that slot the next reset would act on.
    private static func upload(
        _ index: Int,
        candidates: [(offset: Int, element: FirmwarePackage.Image)],
        entries: [ImageManagement.SlotState],
        _ context: ImageContext
    ) throws(PlanningFailure) -> ImageDecision {
        let strategy = context.strategy
        let active = entries.first { $0.isActive }
        let activeSlot = active.map { Int($0.slot) } ?? 0
        var warnings = try checkDowngrade(index, candidates.map(\.element), running: active, context)
        // Pick the build for the target slot.
        let target = strategy.isDirectXIP ? 1 - activeSlot : 1
        let chosen = candidates.first { $0.element.slot == target } ?? candidates[0]
        if strategy.isDirectXIP && candidates.count > 1 && chosen.element.slot != target {
            throw PlanningFailure(
                code: .invalidPackage,
                message: "image \(index) runs from slot \(activeSlot) and the package has no build for slot \(target)"
            )
        }
        if strategy.isDirectXIP && candidates.count == 1 && chosen.element.slot != target
            && chosen.element.manifestEntry != nil
        {
            warnings.append(
                "image \(index): the package's build is for slot \(chosen.element.slot) but the device will place it in slot \(target)"
            )
        }
        let occupant = entries.first { Int($0.slot) == target && !$0.isActive }
        let plan = FirmwareUpgradePlan.ImagePlan(
            imageIndex: index,
            packageIndex: chosen.offset,
            hash: chosen.element.hash,
            version: chosen.element.version?.description,
            slot: target,
            action: .upload,
            reason: "not on the device; upload to slot \(target)"
        )
        return ImageDecision(
            plan: plan,
            held: occupant.flatMap { pendingChange($0, entries: entries) },
            warnings: warnings
        )
    }

    /// A bootloader that refuses downgrades would erase an older image at the next boot, one that
    /// boots the highest version would never boot it: refused before anything is written, unless
    /// allowed (a warning then).
    private static func checkDowngrade(
        _ index: Int,
        _ candidates: [FirmwarePackage.Image],
        running: ImageManagement.SlotState?,
        _ context: ImageContext
    ) throws(PlanningFailure) -> [String] {
        guard context.noDowngrade || context.strategy.isDirectXIP,
            let older = downgrade(candidates, running: running)
        else { return [] }
        let why =
            context.noDowngrade
            ? "the device refuses downgrades (MCUboot's downgrade prevention)"
            : "the bootloader boots the highest version"
        let text = "image \(index): \(older.new) is older than the running \(older.running) and \(why)"
        guard context.allowDowngrade else {
            throw PlanningFailure(
                code: .downgradeRefused,
                message: "\(text); nothing was uploaded (--allow-downgrade tries anyway)"
            )
        }
        return [
            "\(text): the bootloader will \(context.noDowngrade ? "erase it instead of booting it" : "not boot it")"
        ]
    }

    /// What the next reset does with an image in a slot that is not running, if anything: boots
    /// it once (pending), installs it (permanent), or brings it back (confirmed: the revert target).
    static func pendingChange(
        _ entry: ImageManagement.SlotState,
        entries: [ImageManagement.SlotState]
    ) -> FirmwareUpgradePlan.PendingBootChange? {
        guard !entry.isActive, entry.isPending || entry.isConfirmed else { return nil }
        let kind: FirmwareUpgradePlan.PendingBootChange.Kind =
            entry.isPending ? (entry.isPermanent ? .permanent : .test) : .revert
        let running = entries.first { $0.isActive }
        return .init(
            kind: kind,
            imageIndex: Int(entry.imageNumber),
            slot: Int(entry.slot),
            version: entry.version,
            hash: entry.hash.map(Array.init),
            runningVersion: running?.version,
            runningHash: running?.hash.map(Array.init)
        )
    }

    /// The revert a reset would make of `running`, an unconfirmed test image: back to the revert
    /// target when the device lists one (swap), else to the image in its other slot (DirectXIP
    /// with revert lists no flags there).
    private static func revertTarget(
        in entries: [ImageManagement.SlotState],
        running: ImageManagement.SlotState
    ) -> FirmwareUpgradePlan.PendingBootChange {
        let target =
            entries.first { !$0.isActive && $0.isConfirmed && !$0.isPending } ?? entries.first { !$0.isActive }
        return .init(
            kind: .revert,
            imageIndex: Int(running.imageNumber),
            slot: target.map { Int($0.slot) } ?? (running.slot == 0 ? 1 : 0),
            version: target?.version ?? "the image it replaced",
            hash: target?.hash.map(Array.init),
            runningVersion: running.version,
            runningHash: running.hash.map(Array.init)
        )
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
}
