import MCUmgr
import SMPCore

/// The command sequence a plan's per-image decisions make, and what happens when a reset would
/// act on something nobody asked for.
extension MCUbootPlanner {
    /// The command sequence for per-image decisions.
    /// - Parameters:
    ///   - plans: the per-image decisions.
    ///   - mode: the mode in force.
    ///   - installsByReset: DirectXIP without revert (or RAM load) in a mode other than
    ///     upload-only: the reset is the installation.
    ///   - eraseAppSettings: erase settings after the uploads.
    static func steps(
        for plans: [FirmwareUpgradePlan.ImagePlan],
        mode: FirmwareUpgrade.Mode,
        installsByReset: Bool,
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
            if installsByReset {
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

    /// The plan when a reset the upgrade needs would act on something nobody asked for: a revert
    /// when allowed (``FirmwareUpgrade/Configuration/revertPending``, never in upload-only), else
    /// a refusal naming what holds the slot and the ways out. An image marked for the next boot
    /// is never booted on the upgrade's initiative.
    /// - Throws: ``PlanningFailure`` `slotBusy` with the changes.
    static func planRevert(
        _ held: [FirmwareUpgradePlan.PendingBootChange],
        plans: [FirmwareUpgradePlan.ImagePlan],
        mode: FirmwareUpgrade.Mode,
        bootloaderMode: OSManagement.MCUbootMode?,
        warnings: [String],
        revertPending: Bool
    ) throws(PlanningFailure) -> FirmwareUpgradePlan {
        let onlyReverts = held.allSatisfy { $0.kind == .revert }
        guard onlyReverts, mode != .uploadOnly, revertPending else {
            throw PlanningFailure(
                code: .slotBusy,
                message: refusal(held, offerRevert: onlyReverts && mode != .uploadOnly),
                pendingBootChanges: held
            )
        }
        return FirmwareUpgradePlan(
            mode: mode,
            bootloaderMode: bootloaderMode,
            images: plans,
            steps: [.revert(held)],
            warnings: warnings + held.map { "\($0); reverting it as asked (revert-pending)" }
        )
    }

    /// One sentence: what holds the slot, that nothing changed, and the ways out.
    static func refusal(_ held: [FirmwareUpgradePlan.PendingBootChange], offerRevert: Bool) -> String {
        var ways: [String] = []
        let running = held.filter { $0.kind == .revert }.compactMap { change in
            change.runningHash.map { "image \(change.imageIndex) with hash \(hex($0))" }
        }
        if !running.isEmpty {
            ways.append("confirm the running image to keep it (\(running.joined(separator: ", ")))")
            ways.append("reset the device to let it revert")
        }
        if held.contains(where: { $0.kind != .revert }) {
            ways.append("reset the device yourself if that image should boot")
        }
        if offerRevert { ways.append("let the upgrade revert it first (revert-pending)") }
        return held.map(\.description).joined(separator: "; ")
            + "; nothing was changed: \(ways.joined(separator: ", or ")), then upgrade again"
    }

    private static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }
}
