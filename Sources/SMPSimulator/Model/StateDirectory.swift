import Foundation
import SMPPOSIX

/// Saves and restores what survives a restart of the simulator: flash (slots and trailers),
/// saved settings and the files of `/lfs1`.
///
/// Layout: `flash.json` (trailers, active slots, an interrupted swap, what runs), `flash/image<N>-slot<M>.bin`
/// (slot contents), `flash/loader.bin` (the firmware loader, in that mode), `settings.json` (saved settings, base64 values) and `lfs1/` (the files).
struct StateDirectory {
    let url: URL

    var filesRoot: URL { url.appendingPathComponent("lfs1", isDirectory: true) }
    private var flashFolder: URL { url.appendingPathComponent("flash", isDirectory: true) }
    private var flashFile: URL { url.appendingPathComponent("flash.json") }
    private var settingsFile: URL { url.appendingPathComponent("settings.json") }

    private struct FlashRecord: Codable {
        var mode: String
        var slotSize: Int
        var trailers: [[SlotTrailer]]
        var activeSlots: [Int]
        var interrupted: [Int: MCUbootModel.SwapProgress]
        var trusted: [String]
        /// What ran when the flash was saved; absent in folders saved before it was recorded.
        var stage: BootStage?
    }

    /// Makes sure the folder exists and can be written, so that a run does not go on without
    /// saving anything.
    /// - Throws: ``ConfigurationError`` naming the folder and the reason.
    func prepare() throws(ConfigurationError) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw ConfigurationError("state folder \(url.path) is a file, not a folder", subject: .stateFolder)
        }
        do {
            try manager.createDirectory(at: url, withIntermediateDirectories: true)
            let probe = url.appendingPathComponent(".write-test-\(UUID().uuidString)")
            try Data().write(to: probe)
            try manager.removeItem(at: probe)
        } catch {
            throw ConfigurationError(
                "state folder \(url.path) cannot be written: \(FileErrorReason.describe(error))",
                subject: .stateFolder
            )
        }
    }

    /// Loads saved flash if it was saved with the same mode, image count and slot size.
    /// - Returns: `nil` when nothing was saved or it was saved for another layout (the device
    ///   then starts from its factory images).
    /// - Throws: ``ConfigurationError`` when the saved flash is damaged (a file cut short or edited
    ///   by hand): restoring it would put the simulated bootloader in a state it cannot reach.
    func loadFlash(configuration: SimulatedDevice.Configuration) throws(ConfigurationError) -> MCUbootModel? {
        guard let data = try? LocalFile.read(flashFile) else { return nil }
        let record: FlashRecord
        do {
            record = try JSONDecoder().decode(FlashRecord.self, from: data)
        } catch {
            throw damaged("flash.json cannot be read (\(error))")
        }
        let mode = configuration.bootloaderMode
        guard record.mode == mode.rawValue, record.slotSize == configuration.slotSize,
            record.trailers.count == configuration.imageCount
        else { return nil }
        var slots: [[FlashSlot]] = []
        for (image, trailers) in record.trailers.enumerated() {
            var pair: [FlashSlot] = []
            for (slot, trailer) in trailers.enumerated() {
                let bytes = (try? LocalFile.read(slotFile(image: image, slot: slot))).map { Array($0) } ?? []
                pair.append(FlashSlot(data: bytes, trailer: trailer))
            }
            slots.append(pair)
        }
        try check(record, slots: slots, configuration: configuration)
        var loader: FlashSlot?
        if mode == .firmwareLoader {
            let saved = (try? LocalFile.read(loaderFile)).map {
                FlashSlot(data: Array($0), trailer: SlotTrailer(magic: true, imageOK: true))
            }
            loader = saved ?? MCUbootModel.factoryLoader
        }
        var model = MCUbootModel(
            mode: mode,
            slotSize: configuration.slotSize,
            signingKey: configuration.signingKey,
            downgradePrevention: configuration.downgradePrevention,
            recoveryEntry: configuration.recoveryEntry,
            slots: slots,
            loader: loader,
            activeSlots: record.activeSlots,
            interruptedSwap: record.interrupted,
            trustedHashes: Set(record.trusted.compactMap(StateDirectory.bytes(fromHex:))),
            stage: record.stage ?? .application
        )
        if !Self.stage(model.stage, isReachableIn: configuration) {
            // Saved by a device built another way (the options changed): this one powers on.
            model.boot()
        }
        return model
    }

    /// Refuses saved flash the model could never have written: the slot and image counts, the
    /// active slots and an interrupted swap's progress are what the swap and boot code index by.
    private func check(
        _ record: FlashRecord,
        slots: [[FlashSlot]],
        configuration: SimulatedDevice.Configuration
    ) throws(ConfigurationError) {
        let slotCount = configuration.bootloaderMode.isSingleSlot ? 1 : 2
        let sector = MCUbootModel.sectorSize
        // A swap pads both slots to whole sectors.
        let largest = (configuration.slotSize + sector - 1) / sector * sector
        for (image, pair) in slots.enumerated() {
            guard pair.count == slotCount else {
                throw damaged("image \(image) has \(pair.count) slots saved, not \(slotCount)")
            }
            for (slot, flash) in pair.enumerated() where flash.data.count > largest {
                throw damaged("image \(image) slot \(slot) holds \(flash.data.count) bytes; a slot has \(largest)")
            }
        }
        guard record.activeSlots.count == slots.count, record.activeSlots.allSatisfy({ (0..<slotCount).contains($0) })
        else {
            throw damaged(
                "the active slots \(record.activeSlots) do not fit \(slots.count) images of \(slotCount) slots"
            )
        }
        for (image, progress) in record.interrupted {
            guard configuration.bootloaderMode.isSwap, (0..<slots.count).contains(image) else {
                throw damaged("an interrupted swap of image \(image) is saved, which this bootloader cannot have")
            }
            let steps = MCUbootModel.swapSteps(lengths: progress.lengths)
            guard progress.lengths.count == 2,
                progress.lengths.allSatisfy({ (0...configuration.slotSize).contains($0) }),
                (0..<steps).contains(progress.stepsDone),
                progress.scratch.count == sector || (progress.scratch.isEmpty && progress.stepsDone % 3 == 0)
            else { throw damaged("the interrupted swap of image \(image) (\(progress)) is not one a swap leaves") }
        }
    }

    /// Whether a device of this configuration can be found in a stage (a saved one).
    private static func stage(_ stage: BootStage, isReachableIn configuration: SimulatedDevice.Configuration) -> Bool {
        switch stage {
        case .application, .halted: true
        case .firmwareLoader: configuration.bootloaderMode == .firmwareLoader
        case .serialRecovery: configuration.recoveryEntry.serialRecovery
        }
    }

    private func damaged(_ reason: String) -> ConfigurationError {
        ConfigurationError(
            "state folder \(url.path): the saved flash is damaged: \(reason); remove flash.json and flash/ to start from the factory images",
            subject: .savedFlash
        )
    }

    /// Writes flash; slot files are rewritten only when their contents changed.
    func saveFlash(_ model: MCUbootModel) {
        try? FileManager.default.createDirectory(at: flashFolder, withIntermediateDirectories: true)
        for (image, pair) in model.slots.enumerated() {
            for (slot, flash) in pair.enumerated() {
                let file = slotFile(image: image, slot: slot)
                let existing = try? LocalFile.read(file)
                if existing.map(Array.init) != flash.data { try? Data(flash.data).write(to: file, options: .atomic) }
            }
        }
        if let loader = model.loader, (try? LocalFile.read(loaderFile)).map(Array.init) != loader.data {
            try? Data(loader.data).write(to: loaderFile, options: .atomic)
        }
        let record = FlashRecord(
            mode: model.mode.rawValue,
            slotSize: model.slotSize,
            trailers: model.slots.map { $0.map(\.trailer) },
            activeSlots: model.activeSlots,
            interrupted: model.interruptedSwap,
            trusted: model.trustedHashes.map { $0.map { String(format: "%02x", $0) }.joined() }.sorted(),
            stage: model.stage
        )
        if let data = try? JSONEncoder().encode(record) { try? data.write(to: flashFile, options: .atomic) }
    }

    func loadSettings() -> [String: [UInt8]] {
        guard let data = try? LocalFile.read(settingsFile),
            let saved = try? JSONDecoder().decode([String: Data].self, from: data)
        else { return [:] }
        return saved.mapValues { Array($0) }
    }

    func saveSettings(_ saved: [String: [UInt8]]) {
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        if let data = try? JSONEncoder().encode(saved.mapValues { Data($0) }) {
            try? data.write(to: settingsFile, options: .atomic)
        }
    }

    private var loaderFile: URL { flashFolder.appendingPathComponent("loader.bin") }

    private func slotFile(image: Int, slot: Int) -> URL {
        flashFolder.appendingPathComponent("image\(image)-slot\(slot).bin")
    }

    static func bytes(fromHex text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2, limitedBy: text.endIndex) ?? text.endIndex
            guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
            out.append(byte)
            index = next
        }
        return out
    }
}
