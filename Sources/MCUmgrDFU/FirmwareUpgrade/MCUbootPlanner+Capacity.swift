import MCUboot
import SMPCore

/// Whether the images to upload fit the slots the device reports (image group command 6):
/// checked before the first chunk, which erases the slot.
extension MCUbootPlanner {
    /// Bytes MCUboot keeps at the end of a slot for its trailer with Zephyr's default settings
    /// (swap status for `CONFIG_BOOT_MAX_IMG_SECTORS` 128 sectors at write alignment 1, then a
    /// 16-byte magic and four 8-byte fields): 432, as observed (`zephyr-observed.md`). Other
    /// sector counts and write alignments need more, which the device does not report.
    package static let defaultTrailerSize = 432

    /// Refuses an image larger than its slot; warns about one that fits the slot but leaves
    /// MCUboot less room for its trailer than its default settings need.
    ///
    /// `max_image_size`, when the device reports it, is Zephyr's own limit (with its "too large"
    /// checks, which count the trailer): no margin is guessed then. With only the slot size, the
    /// image must fit, and one within ``defaultTrailerSize`` of the end gets a warning — MCUboot
    /// would take it and then erase it at boot.
    /// - Parameters:
    ///   - plan: the plan (its uploads are checked).
    ///   - images: the package's images, as the plan indexes them.
    ///   - capacities: the device's slot information, per image; empty when it has none.
    /// - Returns: warnings.
    /// - Throws: ``PlanningFailure`` `imageTooLarge`, with both sizes.
    static func checkCapacity(
        _ plan: FirmwareUpgradePlan,
        images: [FirmwarePackage.Image],
        capacities: [ImageManagement.SlotInfo.Image]
    ) throws(PlanningFailure) -> [String] {
        var warnings: [String] = []
        for entry in plan.images where entry.action == .upload && images.indices.contains(entry.packageIndex) {
            let capacity = capacities.first { Int($0.image) == entry.imageIndex }
            if let warning = try checkFit(
                images[entry.packageIndex],
                imageIndex: entry.imageIndex,
                slot: entry.slot,
                capacity: capacity,
                strategy: Strategy(plan.bootloaderMode)
            ) {
                warnings.append(warning)
            }
        }
        return warnings
    }

    /// Checks one image against the slot it goes to.
    /// - Parameters:
    ///   - image: the image.
    ///   - imageIndex: its image number.
    ///   - slot: the slot it goes to.
    ///   - capacity: what the device reports for that image number, if anything.
    ///   - strategy: how the bootloader applies it (the trailer matters where it copies).
    /// - Returns: a warning when it fits but leaves too little room for the trailer.
    /// - Throws: ``PlanningFailure`` `imageTooLarge`, with both sizes.
    package static func checkFit(
        _ image: FirmwarePackage.Image,
        imageIndex: Int,
        slot: Int,
        capacity: ImageManagement.SlotInfo.Image?,
        strategy: Strategy
    ) throws(PlanningFailure) -> String? {
        guard let capacity else { return nil }
        let size = image.data.count
        let slotSize = capacity.slots.first { Int($0.slot) == slot }.map { Int(clamping: $0.size) }
        guard let limit = capacity.maxImageSize.map({ Int(clamping: $0) }) ?? slotSize else { return nil }
        let name = "\(image.fileName) (image \(imageIndex))"
        let what = capacity.maxImageSize != nil ? "max_image_size" : "the size of slot \(slot)"
        guard size <= limit else {
            throw PlanningFailure(
                code: .imageTooLarge,
                message:
                    "\(name) is \(size) bytes and the device takes at most \(limit) there (\(what)); nothing was uploaded"
            )
        }
        guard capacity.maxImageSize == nil, strategy.copiesAtBoot, limit - size < defaultTrailerSize else { return nil }
        return
            "\(name) is \(size) bytes and leaves \(limit - size) of the \(limit) in slot \(slot); MCUboot keeps the end of the slot for its trailer (\(defaultTrailerSize) bytes with Zephyr's default settings, more with others): it may erase the image at boot"
    }
}
