import MCUboot

/// MCUboot's swaps and copies step by step, so that power can be lost between any two flash
/// operations, as MCUboot's own simulator does.
///
/// A swap exchanges the two slots sector by sector through the scratch area: for each sector the
/// primary's content goes to scratch, the secondary's to the primary, scratch's to the secondary;
/// a last step writes the trailers. The swap status area records the progress, and the next boot
/// resumes at the step after the last one done. An overwrite copies the secondary over the
/// primary sector by sector and erases the secondary last; it keeps no status, and the next boot
/// — finding the secondary still marked — copies it again from the start.
extension MCUbootModel {
    /// The size of one flash sector.
    static let sectorSize = 4096

    /// A swap in progress, as MCUboot's swap status area records it.
    public struct SwapProgress: Sendable, Hashable, Codable, CustomStringConvertible {
        /// What the swap does.
        public var type: SwapType
        /// Steps done; the next boot resumes with the next.
        public var stepsDone: Int
        /// The sector in the scratch area (the primary's, on its way to the secondary).
        var scratch: [UInt8]
        /// The lengths of the primary's and the secondary's images when the swap began, so that
        /// each slot ends holding exactly the other's image.
        var lengths: [Int]

        public var description: String { "\(type) swap, \(stepsDone) steps done" }
    }

    /// The steps a swap of two images of these lengths takes: three per sector, then the trailers.
    static func swapSteps(lengths: [Int]) -> Int {
        3 * sectors(lengths.max() ?? 0) + 1
    }

    private static func sectors(_ bytes: Int) -> Int { max(1, (bytes + sectorSize - 1) / sectorSize) }

    /// Counts a flash step down to the power loss. - Returns: `false` when power is lost now.
    private mutating func takeStep(_ countdown: inout Int?) -> Bool {
        lastSwapSteps += 1
        guard let left = countdown else { return true }
        if left == 0 {
            countdown = nil
            lastBootInterrupted = true
            return false
        }
        countdown = left - 1
        return true
    }

    /// Swaps an image's slots as MCUboot decides (test, permanent, revert), resuming an
    /// interrupted swap first.
    /// - Returns: the bytes moved, or `nil` when power was lost (the progress is recorded).
    mutating func performSwap(image: Int, countdown: inout Int?, log: inout [String]) -> Int? {
        var progress: SwapProgress
        if let interrupted = interruptedSwap[image] {
            // A resumed swap validated the image before it started.
            progress = interrupted
        } else {
            let type = swapType(image: image)
            if type == .none {
                log.append("image \(image): boot primary")
                return 0
            }
            if type != .revert, let refused = refuseSecondary(image: image) {
                if refused == Self.invalidSecondary {
                    // MCUboot marks the primary confirmed so that it is not reverted later.
                    slots[image][0].trailer.magic = true
                    slots[image][0].trailer.imageOK = true
                }
                log.append("image \(image): \(refused); boot primary")
                return 0
            }
            progress = SwapProgress(
                type: type,
                stepsDone: 0,
                scratch: [],
                lengths: [slots[image][0].data.count, slots[image][1].data.count]
            )
        }
        let resumed = progress.stepsDone > 0
        let total = Self.swapSteps(lengths: progress.lengths)
        let padded = (total - 1) / 3 * Self.sectorSize
        for slot in 0..<2 where slots[image][slot].data.count < padded {
            slots[image][slot].data += Array(repeating: 0xff, count: padded - slots[image][slot].data.count)
        }
        while progress.stepsDone < total {
            guard takeStep(&countdown) else {
                interruptedSwap[image] = progress
                log.append("image \(image): power lost during \(progress)")
                return nil
            }
            let sector = progress.stepsDone / 3
            let range = sector * Self.sectorSize..<(sector + 1) * Self.sectorSize
            switch progress.stepsDone < total - 1 ? progress.stepsDone % 3 : 3 {
            case 0: progress.scratch = Array(slots[image][0].data[range])
            case 1: slots[image][0].data.replaceSubrange(range, with: slots[image][1].data[range])
            case 2: slots[image][1].data.replaceSubrange(range, with: progress.scratch)
            default:
                slots[image][0] = FlashSlot(
                    data: Array(slots[image][0].data.prefix(progress.lengths[1])),
                    trailer: SlotTrailer(magic: true, imageOK: progress.type != .test, copyDone: true)
                )
                slots[image][1] = FlashSlot(data: Array(slots[image][1].data.prefix(progress.lengths[0])))
            }
            progress.stepsDone += 1
        }
        interruptedSwap[image] = nil
        log.append("image \(image): \(progress.type) swap\(resumed ? " (resumed)" : "")")
        return progress.lengths.reduce(0, +)
    }

    static let invalidSecondary = "secondary image invalid, erased"

    /// Bytes MCUboot keeps at the end of a slot for its trailer, with Zephyr's defaults: swap
    /// status for 128 sectors (`CONFIG_BOOT_MAX_IMG_SECTORS`) at write alignment 1, a 16-byte
    /// magic and four 8-byte fields — 432, as observed; overwrite-only keeps no swap status.
    var trailerSize: Int {
        switch mode {
        case .overwriteOnly: 48
        case .swapUsingScratch, .swapUsingMove, .swapUsingOffset, .none: 432
        default: 0
        }
    }

    /// The largest image that can boot from a slot: the slot less MCUboot's trailer.
    public var largestBootableImage: Int { slotSize - trailerSize }

    /// Erases a secondary image MCUboot will not install — one that fails validation, one that
    /// leaves no room for the trailer, or an older one with downgrade prevention — and says why;
    /// `nil` when it may be installed.
    private mutating func refuseSecondary(image: Int) -> String? {
        let reason: String?
        if !isValid(slots[image][1].data) {
            reason = Self.invalidSecondary
        } else if let length = self.image(image, slot: 1)?.tlvArea.upperBound, length > largestBootableImage {
            reason =
                "secondary image of \(length) bytes leaves no room for the \(trailerSize)-byte trailer in a \(slotSize)-byte slot, erased"
        } else {
            reason = refusedDowngrade(image: image).map { "\($0); slot 1 erased due to downgrade prevention" }
        }
        if reason != nil { slots[image][1] = .erased }
        return reason
    }

    /// Overwrite-only: copies a valid secondary image over the primary and erases the secondary.
    /// - Returns: the bytes copied, or `nil` when power was lost mid-way (the secondary is still
    ///   marked, so the next boot copies again).
    mutating func performOverwrite(image: Int, countdown: inout Int?, log: inout [String]) -> Int? {
        guard slots[image][1].trailer.magic else {
            log.append("image \(image): boot primary")
            return 0
        }
        let incoming = slots[image][1].data
        if let refused = refuseSecondary(image: image) {
            log.append("image \(image): \(refused); boot primary")
            return 0
        }
        let sectors = Self.sectors(incoming.count)
        for sector in 0...sectors {
            guard takeStep(&countdown) else {
                log.append("image \(image): power lost during the overwrite, at step \(sector)")
                return nil
            }
            if sector == sectors {
                slots[image][0] = FlashSlot(
                    data: incoming,
                    trailer: SlotTrailer(magic: true, imageOK: true, copyDone: true)
                )
                slots[image][1] = .erased
            } else {
                let range = sector * Self.sectorSize..<min((sector + 1) * Self.sectorSize, incoming.count)
                write(image: image, slot: 0, offset: range.lowerBound, bytes: Array(incoming[range]))
                slots[image][0].trailer = .erased
            }
        }
        log.append("image \(image): overwrite")
        return incoming.count
    }
}
