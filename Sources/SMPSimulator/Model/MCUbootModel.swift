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

/// What runs on the device after a boot.
public enum BootStage: String, Sendable, Hashable, Codable, CustomStringConvertible {
    /// The application, from its running slot.
    case application
    /// The firmware loader application (firmware-loader mode), which writes the application slot.
    case firmwareLoader = "firmware-loader"
    /// MCUboot's serial recovery: the bootloader's own SMP server.
    case serialRecovery = "serial-recovery"
    /// Nothing: MCUboot found nothing to boot and has no recovery to fall back on (it hangs until
    /// the recovery button is held at a reset).
    case halted

    public var description: String { rawValue }
}

/// Why MCUboot is asked to stop before the application, as it checks at boot.
public enum BootRequest: Sendable, Hashable {
    /// A plain boot.
    case normal
    /// The retention boot mode says "bootloader" (an `os reset` with `boot_mode: 1`): MCUboot
    /// reads it after its own boot decision (swaps happen first) and clears it.
    case bootMode
    /// The recovery button is held: MCUboot checks it before anything else (no swap happens).
    case button
}

/// The MCUboot side of the simulated device: 1–N images of two slots each, the trailers that
/// test/confirm write, and the decision MCUboot takes at every boot.
///
/// Pure state: no I/O, no time. ``boot(interruptingSwap:request:)`` applies MCUboot's decision table
/// (`smp-protocol.md` §15.1) for the configured ``BootloaderMode``; an image that fails
/// validation (magic, TLV hash, optionally the signature against ``signingKey``) is erased and
/// the old one boots.
public struct MCUbootModel: Sendable {
    /// How MCUboot can be made to stop in recovery (or in the firmware loader).
    public struct RecoveryEntry: Sendable, Hashable {
        /// Built with serial recovery (`MCUBOOT_SERIAL`); the recovery button enters it.
        public var serialRecovery: Bool
        /// The retention boot mode is read (`CONFIG_BOOT_SERIAL_BOOT_MODE`,
        /// `CONFIG_BOOT_FIRMWARE_LOADER_BOOT_MODE`).
        public var bootMode: Bool
        /// With nothing valid to boot, enter recovery (or the loader) instead of hanging
        /// (`BOOT_SERIAL_NO_APPLICATION`, `BOOT_FIRMWARE_LOADER_NO_APPLICATION`).
        public var withoutApplication: Bool

        /// Creates the entry options.
        public init(serialRecovery: Bool = true, bootMode: Bool = true, withoutApplication: Bool = false) {
            self.serialRecovery = serialRecovery
            self.bootMode = bootMode
            self.withoutApplication = withoutApplication
        }
    }

    /// The upgrade strategy.
    public let mode: BootloaderMode
    /// How recovery is entered.
    public let recoveryEntry: RecoveryEntry
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
    /// The firmware loader's own slot (firmware-loader mode only): Zephyr lists it as slot 1 of
    /// image 0 while the loader runs.
    public internal(set) var loader: FlashSlot?
    /// The slot each image runs from (0 except in DirectXIP and RAM-load modes).
    public internal(set) var activeSlots: [Int]
    /// What the last boot started.
    public internal(set) var stage: BootStage
    /// Swaps interrupted by a power loss, by image, resumed at the next boot.
    public internal(set) var interruptedSwap: [Int: SwapProgress]
    /// The flash steps (sector copies, trailer writes) the swaps and copies of the last boot
    /// took: the moments a power loss can strike.
    public internal(set) var lastSwapSteps = 0
    /// Whether the last boot was cut short by a power loss during a swap or copy.
    public internal(set) var lastBootInterrupted = false
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
    ///   - recoveryEntry: how recovery (or the firmware loader) is entered.
    ///   - stage: what runs at first: the application, or (the recovery button held at power-on)
    ///     serial recovery or the firmware loader.
    public init(
        mode: BootloaderMode,
        imageCount: Int,
        slotSize: Int,
        factoryImages: [[UInt8]],
        signingKey: ImagePublicKey? = nil,
        downgradePrevention: Bool = false,
        recoveryEntry: RecoveryEntry = RecoveryEntry(),
        stage: BootStage = .application
    ) {
        self.mode = mode
        self.recoveryEntry = recoveryEntry
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
        loader = mode == .firmwareLoader ? Self.factoryLoader : nil
        activeSlots = Array(repeating: 0, count: imageCount)
        self.stage = stage
        interruptedSwap = [:]
        lastBootLog = []
        trustedHashes = Set(
            (factoryImages + (loader.map { [$0.data] } ?? [])).compactMap { try? MCUbootImage(bytes: $0).hash }
        )
    }

    /// Restores a model from saved flash.
    init(
        mode: BootloaderMode,
        slotSize: Int,
        signingKey: ImagePublicKey?,
        downgradePrevention: Bool,
        recoveryEntry: RecoveryEntry,
        slots: [[FlashSlot]],
        loader: FlashSlot?,
        activeSlots: [Int],
        interruptedSwap: [Int: SwapProgress],
        trustedHashes: Set<[UInt8]>,
        stage: BootStage
    ) {
        self.trustedHashes = trustedHashes
        self.mode = mode
        self.recoveryEntry = recoveryEntry
        self.loader = loader
        self.slotSize = slotSize
        self.signingKey = signingKey
        self.downgradePrevention = downgradePrevention
        self.slots = slots
        self.activeSlots = activeSlots
        self.stage = stage
        self.interruptedSwap = interruptedSwap
        self.lastBootLog = []
    }

    /// The firmware loader a firmware-loader device leaves the factory with.
    static var factoryLoader: FlashSlot {
        let image = FactoryImage.make(version: ImageVersion(major: 1, minor: 0, revision: 0), name: "firmware loader")
        return FlashSlot(data: image, trailer: SlotTrailer(magic: true, imageOK: true))
    }

    /// Whether an SMP server of Zephyr's answers: the application or the firmware loader runs
    /// (false in serial recovery, whose server is MCUboot's, and when halted).
    public var isRunning: Bool { stage == .application || stage == .firmwareLoader }

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
        if let interrupted = interruptedSwap[image] { return interrupted.type }
        switch mode {
        case .swapUsingScratch, .swapUsingMove, .swapUsingOffset, .none, .ramLoad:
            // Without a bootloader, and with RAM load, Zephyr still reads the trailers this way;
            // nothing acts on them.
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

    /// The slot that will run after the next boot, as DirectXIP and RAM load select it.
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
}

/// The image a simulated device is "flashed" with in the factory: a minimal valid MCUboot image
/// (0x200-byte header, a small payload, a SHA-256 TLV).
public enum FactoryImage {
    /// Builds a factory image (tests also use it for images of any size).
    /// - Parameters:
    ///   - version: the version in its header.
    ///   - image: the image number (varies the payload so each image has its own hash).
    ///   - payloadSize: the payload's size in bytes (at least its text line).
    ///   - name: what the image is, in its payload text (the firmware loader is another image).
    /// - Returns: the image bytes.
    public static func make(
        version: ImageVersion,
        image: Int = 0,
        payloadSize: Int = 1024,
        name: String = "application"
    ) -> [UInt8] {
        let headerSize = 0x200
        var payload = Array("Simulated Zephyr \(name), image \(image), version \(version)\n".utf8)
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
