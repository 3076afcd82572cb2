import Foundation
import MCUboot
import SMPCore

/// The trailer flags MCUboot keeps at the end of a slot (`smp-protocol.md` §14.6), as state.
public struct SlotTrailer: Sendable, Hashable, Codable {
    /// A good boot magic is written: the slot asks for an upgrade (secondary) or records a swap
    /// (primary).
    public var magic: Bool
    /// `image_ok` is set: the image is confirmed.
    public var imageOK: Bool
    /// `copy_done` is set: a swap into this slot completed (or, in DirectXIP with revert, the
    /// image has been booted once).
    public var copyDone: Bool

    /// Creates a trailer.
    public init(magic: Bool = false, imageOK: Bool = false, copyDone: Bool = false) {
        self.magic = magic
        self.imageOK = imageOK
        self.copyDone = copyDone
    }

    /// Erased flash: every flag unset.
    public static let erased = SlotTrailer()
}

/// One flash slot: the bytes written to it (an image, possibly partial) and its trailer.
public struct FlashSlot: Sendable, Hashable {
    /// The bytes written from the start of the slot; empty when erased.
    public var data: [UInt8]
    /// The trailer at the end of the slot.
    public var trailer: SlotTrailer

    /// Creates a slot.
    public init(data: [UInt8] = [], trailer: SlotTrailer = .erased) {
        self.data = data
        self.trailer = trailer
    }

    /// An erased slot.
    public static let erased = FlashSlot()
}

/// What MCUboot decides to do with an image at boot (`boot_swap_type`).
public enum SwapType: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// Boot the primary slot as it is.
    case none
    /// Swap in the secondary image for one boot.
    case test
    /// Swap in the secondary image for good.
    case permanent
    /// Swap back: the test image was not confirmed.
    case revert

    public var description: String { rawValue }
}

/// The MCUboot side of the simulated device: 1–N images of two slots each, the trailers that
/// test/confirm write, and the decision MCUboot takes at every boot.
///
/// Pure state: no I/O, no time. ``boot(interruptingSwap:)`` applies MCUboot's decision table
/// (`smp-protocol.md` §15.1) for the configured ``BootloaderMode``; an image that fails
/// validation (magic, TLV hash, optionally the signature against ``signingKey``) is erased and
/// the old one boots.
public struct MCUbootModel: Sendable {
    /// The upgrade strategy.
    public let mode: BootloaderMode
    /// Size of every slot.
    public let slotSize: Int
    /// The key images must be signed with, if any.
    public let signingKey: ImagePublicKey?
    /// `MCUBOOT_DOWNGRADE_PREVENTION`: in the swap and overwrite-only modes an image in the
    /// secondary slot older than the primary's (major.minor.revision) is erased instead of
    /// installed. DirectXIP modes boot the highest version anyway.
    public let downgradePrevention: Bool
    /// Flash: `slots[image][slot]`.
    public internal(set) var slots: [[FlashSlot]]
    /// The slot each image runs from (0 except in DirectXIP modes).
    public internal(set) var activeSlots: [Int]
    /// Whether the last boot found a bootable image for every image (otherwise MCUboot hangs and
    /// the application does not run).
    public internal(set) var isRunning: Bool
    /// A swap interrupted by a power loss, resumed at the next boot.
    public internal(set) var interruptedSwap: [Int: SwapType]
    /// What the last boot did, one line per image (for logs and tests).
    public internal(set) var lastBootLog: [String]
    /// Hashes of the factory images, trusted without a signature (they were "flashed in the
    /// factory", not uploaded).
    var trustedHashes: Set<[UInt8]> = []

    /// Creates the model with a valid, confirmed image in slot 0 of every image.
    /// - Parameters:
    ///   - mode: the upgrade strategy.
    ///   - imageCount: number of images.
    ///   - slotSize: size of each slot.
    ///   - factoryImages: the image to place in slot 0 of each image.
    ///   - signingKey: the key MCUboot trusts.
    ///   - downgradePrevention: erase older images instead of installing them (swap and
    ///     overwrite-only modes).
    public init(
        mode: BootloaderMode,
        imageCount: Int,
        slotSize: Int,
        factoryImages: [[UInt8]],
        signingKey: ImagePublicKey? = nil,
        downgradePrevention: Bool = false
    ) {
        self.mode = mode
        self.slotSize = slotSize
        self.signingKey = signingKey
        self.downgradePrevention = downgradePrevention
        let slotCount = mode.isSingleSlot ? 1 : 2
        slots = (0..<imageCount).map { index in
            var pair = Array(repeating: FlashSlot.erased, count: slotCount)
            let image = index < factoryImages.count ? factoryImages[index] : []
            pair[0] = FlashSlot(data: image, trailer: SlotTrailer(magic: true, imageOK: true, copyDone: false))
            return pair
        }
        activeSlots = Array(repeating: 0, count: imageCount)
        isRunning = true
        interruptedSwap = [:]
        lastBootLog = []
        trustedHashes = Set(factoryImages.compactMap { try? MCUbootImage(bytes: $0).hash })
    }

    /// Restores a model from saved flash.
    init(
        mode: BootloaderMode,
        slotSize: Int,
        signingKey: ImagePublicKey?,
        downgradePrevention: Bool,
        slots: [[FlashSlot]],
        activeSlots: [Int],
        interruptedSwap: [Int: SwapType],
        trustedHashes: Set<[UInt8]>
    ) {
        self.trustedHashes = trustedHashes
        self.mode = mode
        self.slotSize = slotSize
        self.signingKey = signingKey
        self.downgradePrevention = downgradePrevention
        self.slots = slots
        self.activeSlots = activeSlots
        self.isRunning = true
        self.interruptedSwap = interruptedSwap
        self.lastBootLog = []
    }

    /// Number of images.
    public var imageCount: Int { slots.count }
    /// Number of slots per image (1 in single-slot modes, else 2).
    public var slotsPerImage: Int { slots.first?.count ?? 2 }

    // MARK: - Reading slots

    /// The image in a slot, parsed structurally (header, TLVs), as Zephyr's `img_mgmt_read_info`
    /// reads it; `nil` for an erased, partial or malformed slot.
    public func image(_ image: Int, slot: Int) -> MCUbootImage? {
        guard image >= 0, image < slots.count, slot >= 0, slot < slots[image].count else { return nil }
        let data = slots[image][slot].data
        guard !data.isEmpty, let parsed = try? MCUbootImage(bytes: data), parsed.hash != nil else { return nil }
        return parsed
    }

    /// Whether bytes are an image MCUboot would boot: good magic, a TLV hash that matches, and a
    /// signature from ``signingKey`` when one is configured.
    public func isValid(_ data: [UInt8]) -> Bool {
        guard !data.isEmpty, let parsed = try? MCUbootImage(bytes: data) else { return false }
        let report = parsed.verify(publicKey: signingKey)
        guard report.isHashValid else { return false }
        if signingKey != nil, let hash = parsed.hash, !trustedHashes.contains(hash) { return report.isSignatureValid }
        return true
    }

    /// The swap MCUboot would perform for an image at the next boot (swap modes), or what the
    /// next boot means for the other modes.
    public func swapType(image: Int) -> SwapType {
        guard image >= 0, image < slots.count else { return .none }
        if let interrupted = interruptedSwap[image] { return interrupted }
        switch mode {
        case .swapUsingScratch, .swapUsingMove, .swapUsingOffset, .none:
            // Without a bootloader Zephyr still reads the trailers this way; nothing acts on them.
            let primary = slots[image][0].trailer
            let secondary = slots[image][1].trailer
            if mode == .swapUsingOffset && secondary.magic && !secondary.imageOK && secondary.copyDone {
                return .revert
            }
            if secondary.magic && !secondary.imageOK { return .test }
            if secondary.magic && secondary.imageOK { return .permanent }
            if primary.magic && !primary.imageOK && primary.copyDone { return .revert }
            return .none
        case .overwriteOnly:
            let secondary = slots[image][1].trailer
            if secondary.magic { return secondary.imageOK ? .permanent : .test }
            return .none
        case .directXIP, .directXIPWithRevert, .singleSlot, .firmwareLoader:
            return .none
        }
    }

    /// The slot that will run after the next boot, as DirectXIP selects it.
    public func directXIPNextSlot(image: Int) -> Int {
        var best: (slot: Int, version: ImageVersion)?
        for slot in 0..<slots[image].count {
            guard isValid(slots[image][slot].data), let parsed = self.image(image, slot: slot) else { continue }
            if mode == .directXIPWithRevert {
                let trailer = slots[image][slot].trailer
                // Booted once without being confirmed: it will be erased.
                if trailer.copyDone && !trailer.imageOK { continue }
                // Neither marked for test nor confirmed: not a candidate.
                if !trailer.magic && !trailer.imageOK { continue }
            }
            // major.minor.revision, as MCUboot compares without the build-number option; on a
            // tie the lower slot (the primary) stays.
            let version = parsed.header.version.withoutBuild
            if let current = best, version <= current.version { continue }
            best = (slot, version)
        }
        return best?.slot ?? activeSlots[image]
    }

    // MARK: - Zephyr's view (image state flags)

    /// The image state list as Zephyr reports it (`img_mgmt_state_read`): one entry per slot
    /// holding an image, every flag written explicitly.
    public func stateList() -> [ImageManagement.SlotState] {
        var list: [ImageManagement.SlotState] = []
        for image in 0..<slots.count {
            for slot in 0..<slots[image].count {
                guard let parsed = self.image(image, slot: slot) else { continue }
                let flags = self.flags(image: image, slot: slot)
                list.append(
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
                )
            }
        }
        return list
    }

    /// The pending/confirmed/active/permanent flags of one slot.
    public func flags(image: Int, slot: Int) -> (pending: Bool, confirmed: Bool, active: Bool, permanent: Bool) {
        let active = isRunning && slot == activeSlots[image]
        switch mode {
        case .swapUsingScratch, .swapUsingMove, .swapUsingOffset, .overwriteOnly, .none:
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
            return (false, true, active, false)
        }
    }

    // MARK: - Writes the application makes (test / confirm / erase / upload)

    /// Where an upload to `image` goes, or the refusal Zephyr gives.
    /// - Returns: the slot, or `NO_FREE_SLOT` / `INVALID_SLOT` (group 1 codes).
    public func uploadSlot(image: Int) -> Result<Int, ImageRefusal> {
        guard image >= 0, image < slots.count else { return .failure(.invalidSlot) }
        switch mode {
        case .singleSlot, .firmwareLoader:
            return .success(0)
        case .directXIP, .directXIPWithRevert:
            let inactive = 1 - activeSlots[image]
            return isInUse(image: image, slot: inactive) ? .failure(.noFreeSlot) : .success(inactive)
        default:
            return isInUse(image: image, slot: 1) ? .failure(.noFreeSlot) : .success(1)
        }
    }

    /// Zephyr's `img_mgmt_slot_in_use`: the running slot, or a slot marked for the next boot
    /// (pending test, permanent, or the image a revert will bring back).
    public func isInUse(image: Int, slot: Int) -> Bool {
        if slot == activeSlots[image] { return true }
        if mode.isSingleSlot { return false }
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

    /// Image state write (`img_mgmt_state_write`) with Zephyr's newest rules.
    /// - Parameters:
    ///   - hash: the image hash, if given.
    ///   - confirm: `true` to confirm (permanent), `false` to test.
    ///   - allowConfirmNonActive: whether confirming a non-running slot by hash is allowed.
    public mutating func setState(hash: [UInt8]?, confirm: Bool, allowConfirmNonActive: Bool) -> Result<
        Void, ImageRefusal
    > {
        guard let hash else {
            if !confirm { return .failure(.invalidHash) }
            confirmRunning(image: 0)
            return .success(())
        }
        guard hash.count == 32 else { return .failure(.invalidHash) }
        guard let (image, slot) = find(hash: hash) else { return .failure(.hashNotFound) }
        let isActive = slot == activeSlots[image]
        if isActive {
            if !confirm { return .failure(.testToActiveDenied) }
            confirmRunning(image: image)
            return .success(())
        }
        let flags = self.flags(image: image, slot: slot)
        if flags.permanent {
            // Confirmed for the next boot: the choice cannot change; confirming again is a no-op.
            return confirm ? .success(()) : .failure(.imageAlreadyPending)
        }
        if confirm && !allowConfirmNonActive { return .failure(.imageConfirmationDenied) }
        if !confirm && flags.pending { return .success(()) }
        switch mode {
        case .singleSlot, .firmwareLoader:
            return .failure(.invalidSlot)
        default:
            slots[image][slot].trailer.magic = true
            slots[image][slot].trailer.imageOK = confirm
            slots[image][slot].trailer.copyDone = false
        }
        return .success(())
    }

    /// Confirms the running image of `image` (writes `image_ok` in its slot).
    public mutating func confirmRunning(image: Int) {
        guard image >= 0, image < slots.count else { return }
        let slot = activeSlots[image]
        slots[image][slot].trailer.magic = true
        slots[image][slot].trailer.imageOK = true
    }

    /// Erases a slot (data and trailer).
    public mutating func erase(image: Int, slot: Int) {
        slots[image][slot] = .erased
    }

    /// Writes bytes at an offset of a slot (the slot's data grows; gaps read as erased flash).
    public mutating func write(image: Int, slot: Int, offset: Int, bytes: [UInt8]) {
        var data = slots[image][slot].data
        if data.count < offset { data += Array(repeating: 0xff, count: offset - data.count) }
        let end = offset + bytes.count
        if data.count < end { data += Array(repeating: 0xff, count: end - data.count) }
        data.replaceSubrange(offset..<end, with: bytes)
        slots[image][slot].data = data
    }

    // MARK: - Boot

    /// Boots: applies MCUboot's decision to every image, as at reset or power-on.
    /// - Parameter interruptingSwap: lose power in the middle of the first swap; it is recorded
    ///   and resumed by the next boot (MCUboot's swap status area), and this boot runs nothing.
    /// - Returns: the number of bytes swapped or copied (for timing).
    @discardableResult
    public mutating func boot(interruptingSwap: Bool = false) -> Int {
        var moved = 0
        var log: [String] = []
        var running = true
        for image in 0..<slots.count {
            switch mode {
            case .swapUsingScratch, .swapUsingMove, .swapUsingOffset:
                let type = swapType(image: image)
                if interruptingSwap && type != .none && interruptedSwap[image] == nil {
                    interruptedSwap[image] = type
                    log.append("image \(image): power lost during \(type) swap")
                    isRunning = false
                    lastBootLog = log
                    return moved
                }
                let resumed = interruptedSwap.removeValue(forKey: image) != nil
                moved += performSwap(image: image, type: type, resumed: resumed, log: &log)
            case .overwriteOnly:
                moved += performOverwrite(image: image, log: &log)
            case .directXIP, .directXIPWithRevert:
                selectDirectXIP(image: image, log: &log)
            case .singleSlot, .firmwareLoader:
                log.append("image \(image): single slot")
            case .none:
                log.append("image \(image): no bootloader; nothing swapped")
            }
            let active = activeSlots[image]
            if !isValid(slots[image][active].data) {
                log.append("image \(image): no bootable image in slot \(active)")
                running = false
            }
        }
        isRunning = running
        lastBootLog = log
        return moved
    }

    private mutating func performSwap(image: Int, type: SwapType, resumed: Bool, log: inout [String]) -> Int {
        switch type {
        case .none:
            log.append("image \(image): boot primary")
            return 0
        case .test, .permanent:
            // A resumed swap already validated the image before it started.
            guard resumed || isValid(slots[image][1].data) else {
                slots[image][1] = .erased
                slots[image][0].trailer.magic = true
                slots[image][0].trailer.imageOK = true
                log.append("image \(image): secondary image invalid, erased; boot primary")
                return 0
            }
            if !resumed, let refused = refusedDowngrade(image: image) {
                slots[image][1] = .erased
                log.append("image \(image): \(refused); slot 1 erased due to downgrade prevention")
                return 0
            }
            let incoming = slots[image][1].data
            let outgoing = slots[image][0].data
            slots[image][0] = FlashSlot(
                data: incoming,
                trailer: SlotTrailer(magic: true, imageOK: type == .permanent, copyDone: true)
            )
            slots[image][1] = FlashSlot(data: outgoing, trailer: .erased)
            log.append("image \(image): \(type) swap\(resumed ? " (resumed)" : "")")
            return incoming.count + outgoing.count
        case .revert:
            let incoming = slots[image][1].data
            let outgoing = slots[image][0].data
            slots[image][0] = FlashSlot(
                data: incoming,
                trailer: SlotTrailer(magic: true, imageOK: true, copyDone: true)
            )
            slots[image][1] = FlashSlot(data: outgoing, trailer: .erased)
            log.append("image \(image): revert swap\(resumed ? " (resumed)" : "")")
            return incoming.count + outgoing.count
        }
    }

    private mutating func performOverwrite(image: Int, log: inout [String]) -> Int {
        guard slots[image][1].trailer.magic else {
            log.append("image \(image): boot primary")
            return 0
        }
        let incoming = slots[image][1].data
        guard isValid(incoming) else {
            slots[image][1] = .erased
            log.append("image \(image): secondary image invalid, erased; boot primary")
            return 0
        }
        if let refused = refusedDowngrade(image: image) {
            slots[image][1] = .erased
            log.append("image \(image): \(refused), secondary erased")
            return 0
        }
        slots[image][0] = FlashSlot(data: incoming, trailer: SlotTrailer(magic: true, imageOK: true, copyDone: true))
        slots[image][1] = .erased
        log.append("image \(image): overwrite")
        return incoming.count
    }

    /// With downgrade prevention, why the secondary image may not replace the primary: its
    /// version (major.minor.revision, as MCUboot compares without the build number option) is
    /// lower. An equal version is allowed.
    private func refusedDowngrade(image: Int) -> String? {
        guard downgradePrevention, let new = self.image(image, slot: 1)?.header.version,
            let current = self.image(image, slot: 0)?.header.version, new.withoutBuild < current.withoutBuild
        else { return nil }
        return "downgrade \(current) → \(new) refused"
    }

    private mutating func selectDirectXIP(image: Int, log: inout [String]) {
        if mode == .directXIPWithRevert {
            for slot in 0..<slots[image].count {
                let trailer = slots[image][slot].trailer
                if trailer.magic && trailer.copyDone && !trailer.imageOK {
                    slots[image][slot] = .erased
                    log.append("image \(image): slot \(slot) was tested and not confirmed, erased")
                }
            }
        }
        let chosen = directXIPNextSlot(image: image)
        activeSlots[image] = chosen
        if mode == .directXIPWithRevert {
            var trailer = slots[image][chosen].trailer
            if trailer.magic && !trailer.imageOK { trailer.copyDone = true }
            slots[image][chosen].trailer = trailer
        }
        log.append("image \(image): boot slot \(chosen)")
    }
}

/// The image a simulated device is "flashed" with in the factory: a minimal valid MCUboot image
/// (0x200-byte header, a small payload, a SHA-256 TLV).
public enum FactoryImage {
    /// Builds a factory image (tests also use it for images of any size).
    /// - Parameters:
    ///   - version: the version in its header.
    ///   - image: the image number (varies the payload so each image has its own hash).
    ///   - payloadSize: the payload's size in bytes (at least its text line).
    /// - Returns: the image bytes.
    public static func make(version: ImageVersion, image: Int = 0, payloadSize: Int = 1024) -> [UInt8] {
        let headerSize = 0x200
        var payload = Array("Simulated Zephyr application, image \(image), version \(version)\n".utf8)
        while payload.count < payloadSize { payload.append(UInt8(truncatingIfNeeded: payload.count &* 31 &+ image)) }
        var bytes: [UInt8] = []
        func le<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { bytes += $0 } }
        le(UInt32(0x96f3_b83d))
        le(UInt32(0))
        le(UInt16(headerSize))
        le(UInt16(0))
        le(UInt32(payload.count))
        le(UInt32(0))
        bytes.append(version.major)
        bytes.append(version.minor)
        le(version.revision)
        le(version.build)
        le(UInt32(0))
        bytes += Array(repeating: 0, count: headerSize - bytes.count)
        bytes += payload
        let digest = ImageHashAlgorithm.sha256.hash(bytes)
        le(UInt16(0x6907))
        le(UInt16(4 + 4 + digest.count))
        le(UInt16(0x10))
        le(UInt16(digest.count))
        bytes += digest
        return bytes
    }
}
