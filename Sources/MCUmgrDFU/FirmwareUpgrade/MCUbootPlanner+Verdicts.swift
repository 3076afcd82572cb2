import MCUmgr
import SMPCore

/// Verdicts on image lists: what a list read after a step shows against what the plan promised.
extension MCUbootPlanner {
    /// The verdict on an image list.
    package typealias Verdict = UpgradeVerdict

    /// The upgrade's checks, as ``UpgradePlanner`` asks for them.
    package func verify(
        _ expectation: FirmwareUpgradePlan.Expectation,
        plan: FirmwareUpgradePlan,
        slots: [ImageManagement.SlotState]
    ) -> UpgradeVerdict {
        Self.verify(expectation, plan: plan, slots: slots)
    }

    package func checkMarked(hash: [UInt8], confirm: Bool, slots: [ImageManagement.SlotState]) -> UpgradeVerdict {
        Self.checkMarked(hash: hash, confirm: confirm, slots: slots)
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
                    "\(name) is no longer on the device\(running): the bootloader erased it (invalid hash or signature, a refused downgrade, or no room left in the slot for its trailer)"
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
