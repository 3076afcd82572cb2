import Foundation
import MCUboot
import MCUmgr
import SMPCore

/// What an upgrade installs: MCUboot images, or a SUIT envelope with its cache images and the
/// resources the device may ask for while it installs.
package enum UpgradePayload: Sendable {
    /// MCUboot images (several per image number with DirectXIP: one per slot).
    case mcuboot([FirmwarePackage.Image])
    /// A SUIT envelope and its caches (in `images`), and files the device may ask for by name.
    case suit(images: [FirmwarePackage.Image], resources: [String: Data])

    /// The images uploaded by index (``FirmwareUpgradePlan/Step`` refers to them).
    package var images: [FirmwarePackage.Image] {
        switch self {
        case .mcuboot(let images), .suit(let images, _): images
        }
    }

    /// The planner for this kind of payload.
    package var planner: any UpgradePlanner {
        switch self {
        case .mcuboot(let images): MCUbootPlanner(images: images)
        case .suit(let images, _): SUITPlanner(images: images)
        }
    }

    /// A resource a SUIT device asked for (`file://name` or `name`), compared without case, by
    /// full name and then by file name.
    /// - Parameter uri: what the device asked for.
    /// - Returns: the bytes, or `nil` when the package does not hold it (or is not SUIT).
    package func resource(_ uri: String) -> Data? {
        guard case .suit(_, let resources) = self else { return nil }
        let bare = (uri.hasPrefix("file://") ? String(uri.dropFirst(7)) : uri).lowercased()
        return resources.first { $0.key.lowercased() == bare }?.value
            ?? resources.first { ($0.key as NSString).lastPathComponent.lowercased() == bare }?.value
    }
}

/// What a planner knows about the device when it plans.
package struct PlanningContext: Sendable {
    /// The device's image list (empty when the planner does not read one).
    package var slots: [ImageManagement.SlotState]
    /// The reported MCUboot mode, or `nil` if the device did not say.
    package var bootloaderMode: OSManagement.MCUbootMode?
    /// The device reported that its bootloader refuses downgrades.
    package var noDowngrade: Bool
    /// The upgrade's configuration.
    package var configuration: FirmwareUpgrade.Configuration
    /// Images (by position in the payload) whose upload the device's own hash check rejected.
    package var corrupted: Set<Int>
    /// The slot sizes the device reported (image 6), empty when it has no slot information,
    /// `nil` when not read yet.
    package var slotCapacities: [ImageManagement.SlotInfo.Image]?

    /// Creates a context.
    package init(
        slots: [ImageManagement.SlotState],
        bootloaderMode: OSManagement.MCUbootMode?,
        noDowngrade: Bool,
        configuration: FirmwareUpgrade.Configuration,
        corrupted: Set<Int> = [],
        slotCapacities: [ImageManagement.SlotInfo.Image]? = nil
    ) {
        self.slots = slots
        self.bootloaderMode = bootloaderMode
        self.noDowngrade = noDowngrade
        self.configuration = configuration
        self.corrupted = corrupted
        self.slotCapacities = slotCapacities
    }
}

/// A plan that cannot be made.
package struct PlanningFailure: Error, Sendable, Hashable {
    /// The error code to report.
    package var code: FirmwareUpgradeError.Code
    /// What and why.
    package var message: String
    /// For a busy slot: what the reset the upgrade would need does.
    package var pendingBootChanges: [FirmwareUpgradePlan.PendingBootChange] = []
}

/// Turns a payload and what the device reported into a ``FirmwareUpgradePlan``; one per kind of
/// payload. Pure: no I/O, no time.
package protocol UpgradePlanner: Sendable {
    /// Whether planning needs the device's image list (MCUboot) or not (SUIT).
    var needsImageList: Bool { get }

    /// Plans the upgrade.
    /// - Parameter context: what the device reported and the configuration.
    /// - Returns: the plan.
    /// - Throws: ``PlanningFailure`` when no plan can be made.
    func plan(_ context: PlanningContext) throws(PlanningFailure) -> FirmwareUpgradePlan

    /// Checks an image list read after a step (a `verify` step) against what the plan promises.
    /// - Parameters:
    ///   - expectation: what every acted-on image must show.
    ///   - plan: the plan.
    ///   - slots: the fresh image list.
    /// - Returns: the verdict.
    func verify(
        _ expectation: FirmwareUpgradePlan.Expectation,
        plan: FirmwareUpgradePlan,
        slots: [ImageManagement.SlotState]
    ) -> UpgradeVerdict

    /// Checks the list a test or confirm was answered with.
    /// - Parameters:
    ///   - hash: the image tested or confirmed.
    ///   - confirm: whether it was a confirm.
    ///   - slots: the answer's list.
    /// - Returns: the verdict.
    func checkMarked(hash: [UInt8], confirm: Bool, slots: [ImageManagement.SlotState]) -> UpgradeVerdict
}

/// A planner's verdict on an image list.
package enum UpgradeVerdict: Sendable, Hashable {
    /// The list shows what was expected.
    case satisfied
    /// An image is still pending where it should run: the reset did not happen.
    case resetNotApplied
    /// The device is not in the promised state.
    case failed(FirmwareUpgradeError.Code, String)
}

/// Plans a SUIT upgrade: the envelope (deferred when cache images follow), the caches, the
/// processing request, then installation with resource requests served from the package.
package struct SUITPlanner: UpgradePlanner {
    /// The package's images: one envelope, any number of caches.
    package let images: [FirmwarePackage.Image]

    /// Creates a planner.
    /// - Parameter images: the package's images.
    package init(images: [FirmwarePackage.Image]) {
        self.images = images
    }

    package var needsImageList: Bool { false }

    package func plan(_ context: PlanningContext) throws(PlanningFailure) -> FirmwareUpgradePlan {
        guard let envelopeIndex = images.firstIndex(where: { $0.content == .suitEnvelope }) else {
            throw PlanningFailure(code: .invalidPackage, message: "the SUIT package holds no envelope")
        }
        let envelope = images[envelopeIndex]
        let caches = images.indices.filter { images[$0].content == .suitCache }
        var steps: [FirmwareUpgradePlan.Step] = [
            .suitUploadEnvelope(packageIndex: envelopeIndex, deferInstall: !caches.isEmpty)
        ]
        steps += caches.map { .suitUploadCache(packageIndex: $0) }
        if !caches.isEmpty { steps.append(.suitProcess) }
        steps.append(.suitInstall(digest: envelope.hash))
        let plan = FirmwareUpgradePlan.ImagePlan(
            imageIndex: envelope.imageIndex,
            packageIndex: envelopeIndex,
            hash: envelope.hash,
            version: envelope.suit?.sequenceNumber.map { "sequence \($0)" },
            slot: 0,
            action: .upload,
            reason: "SUIT envelope; the device installs it and asks for what it needs"
        )
        return FirmwareUpgradePlan(mode: .uploadOnly, bootloaderMode: nil, images: [plan], steps: steps)
    }

    /// A SUIT plan has no verify step: the device's manifests are the verdict (`suitInstall`).
    package func verify(
        _ expectation: FirmwareUpgradePlan.Expectation,
        plan: FirmwareUpgradePlan,
        slots: [ImageManagement.SlotState]
    ) -> UpgradeVerdict {
        .failed(.unsupported, "internal: a SUIT plan has no image list to verify")
    }

    /// A SUIT plan marks no image.
    package func checkMarked(hash: [UInt8], confirm: Bool, slots: [ImageManagement.SlotState]) -> UpgradeVerdict {
        .failed(.unsupported, "internal: a SUIT plan marks no image")
    }

}
