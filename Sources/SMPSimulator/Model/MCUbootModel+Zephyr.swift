import Foundation
import MCUboot
import SMPCore

/// Zephyr's view of the slots (`img_mgmt_state.c`, `zephyr_img_mgmt.c`): the flags it reports,
/// which slot an upload takes, and which slots are in use.
extension MCUbootModel {
    /// The image state list as Zephyr reports it (`img_mgmt_state_read`): one entry per slot
    /// holding an image, every flag written explicitly. While the firmware loader runs, it lists
    /// the application slot and itself (slot 1 of image 0).
    public func stateList() -> [ImageManagement.SlotState] {
        var list: [ImageManagement.SlotState] = []
        for image in 0..<slots.count {
            for slot in 0..<slots[image].count {
                guard let parsed = self.image(image, slot: slot) else { continue }
                list.append(entry(parsed, image: image, slot: slot, flags: flags(image: image, slot: slot)))
            }
        }
        if stage == .firmwareLoader, let loader, let parsed = try? MCUbootImage(bytes: loader.data), parsed.hash != nil
        {
            let running = (pending: false, confirmed: true, active: true, permanent: false)
            list.insert(
                entry(parsed, image: 0, slot: 1, flags: running),
                at: list.firstIndex { $0.imageNumber > 0 } ?? list.count
            )
        }
        return list
    }

    private func entry(
        _ parsed: MCUbootImage,
        image: Int,
        slot: Int,
        flags: (pending: Bool, confirmed: Bool, active: Bool, permanent: Bool)
    ) -> ImageManagement.SlotState {
        ImageManagement.SlotState(
            image: slots.count > 1 ? UInt32(image) : nil,
            slot: UInt32(slot),
            version: parsed.header.version.description,
            hash: parsed.hash.map { Data($0) },
            bootable: parsed.header.isBootable,
            pending: flags.pending,
            confirmed: flags.confirmed,
            active: flags.active,
            permanent: flags.permanent
        )
    }

    /// The pending/confirmed/active/permanent flags of one application slot.
    public func flags(image: Int, slot: Int) -> (pending: Bool, confirmed: Bool, active: Bool, permanent: Bool) {
        let active = stage == .application && slot == activeSlots[image]
        switch mode {
        case .swapUsingScratch, .swapUsingMove, .swapUsingOffset, .overwriteOnly, .none, .ramLoad:
            // RAM load too: Zephyr derives its flags from the swap type, which that bootloader
            // does not act on.
            let type = swapType(image: image)
            if slot == activeSlots[image] {
                return (false, type != .revert, active, false)
            }
            switch type {
            case .test: return (true, false, false, false)
            case .permanent: return (true, false, false, true)
            case .revert: return (false, true, false, false)
            case .none: return (false, false, false, false)
            }
        case .directXIP:
            if slot == activeSlots[image] { return (false, true, active, false) }
            let next = directXIPNextSlot(image: image)
            return next == slot ? (true, false, false, true) : (false, false, false, false)
        case .directXIPWithRevert:
            let trailer = slots[image][slot].trailer
            if slot == activeSlots[image] { return (false, trailer.imageOK, active, false) }
            let next = directXIPNextSlot(image: image)
            return next == slot ? (true, false, false, trailer.imageOK) : (false, false, false, false)
        case .singleSlot, .firmwareLoader:
            // One slot: nothing is tested or reverted. While the loader runs, the application's
            // slot is not the one running.
            return (false, stage != .firmwareLoader, active, false)
        }
    }

    // MARK: - Where writes go

    /// Where an upload to `image` goes, or the refusal Zephyr gives.
    /// - Returns: the slot, or `NO_FREE_SLOT` / `INVALID_SLOT` (group 1 codes).
    public func uploadSlot(image: Int) -> Result<Int, ImageRefusal> {
        guard image >= 0, image < slots.count else { return .failure(.invalidSlot) }
        switch mode {
        case .singleSlot, .firmwareLoader:
            // The application cannot overwrite the slot it runs from; the firmware loader writes
            // it, since the loader runs from its own slot.
            return isInUse(image: image, slot: 0) ? .failure(.noFreeSlot) : .success(0)
        case .directXIP, .directXIPWithRevert, .ramLoad:
            let inactive = 1 - activeSlots[image]
            return isInUse(image: image, slot: inactive) ? .failure(.noFreeSlot) : .success(inactive)
        default:
            return isInUse(image: image, slot: 1) ? .failure(.noFreeSlot) : .success(1)
        }
    }

    /// Zephyr's `img_mgmt_slot_in_use`: the running slot, or a slot marked for the next boot
    /// (pending test, permanent, or the image a revert will bring back). RAM load checks the
    /// running slot only; nothing of the application runs while the firmware loader does.
    public func isInUse(image: Int, slot: Int) -> Bool {
        if stage == .firmwareLoader { return false }
        if slot == activeSlots[image] { return true }
        if mode.isSingleSlot || mode == .ramLoad { return false }
        let flags = self.flags(image: image, slot: slot)
        return flags.pending || flags.confirmed
    }

    /// Refusals of the image-state and upload paths, as `img_mgmt_err_code_t` values.
    public enum ImageRefusal: Int, Error, Sendable {
        case hashNotFound = 8
        case noFreeSlot = 9
        case invalidSlot = 14
        case invalidHash = 24
        case imageAlreadyPending = 28
        case imageConfirmationDenied = 32
        case testToActiveDenied = 33
    }

    /// Finds the slot holding an image with this TLV hash (primary slots first, as Zephyr does).
    public func find(hash: [UInt8]) -> (image: Int, slot: Int)? {
        for slot in 0..<slotsPerImage {
            for image in 0..<slots.count where self.image(image, slot: slot)?.hash == hash {
                return (image, slot)
            }
        }
        return nil
    }
}
