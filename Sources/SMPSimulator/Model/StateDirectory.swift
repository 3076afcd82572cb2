import Foundation
import SMPPOSIX

/// Saves and restores what survives a restart of the simulator: flash (slots and trailers),
/// saved settings and the files of `/lfs1`.
///
/// Layout: `flash.json` (trailers, active slots, an interrupted swap), `flash/image<N>-slot<M>.bin`
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
    }

    /// Makes sure the folder exists and can be written, so that a run does not go on without
    /// saving anything.
    /// - Throws: ``ConfigurationError`` naming the folder and the reason.
    func prepare() throws(ConfigurationError) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        if manager.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw ConfigurationError("state folder \(url.path) is a file, not a folder")
        }
        do {
            try manager.createDirectory(at: url, withIntermediateDirectories: true)
            let probe = url.appendingPathComponent(".write-test-\(UUID().uuidString)")
            try Data().write(to: probe)
            try manager.removeItem(at: probe)
        } catch {
            throw ConfigurationError("state folder \(url.path) cannot be written: \(FileErrorReason.describe(error))")
        }
    }

    /// Loads saved flash if it was saved with the same mode, image count and slot size.
    func loadFlash(configuration: SimulatedDevice.Configuration) -> MCUbootModel? {
        guard let data = try? LocalFile.read(flashFile),
            let record = try? JSONDecoder().decode(FlashRecord.self, from: data),
            record.mode == configuration.bootloaderMode.rawValue, record.slotSize == configuration.slotSize,
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
        var loader: FlashSlot?
        if configuration.bootloaderMode == .firmwareLoader {
            let saved = (try? LocalFile.read(loaderFile)).map {
                FlashSlot(data: Array($0), trailer: SlotTrailer(magic: true, imageOK: true))
            }
            loader = saved ?? MCUbootModel.factoryLoader
        }
        return MCUbootModel(
            mode: configuration.bootloaderMode,
            slotSize: configuration.slotSize,
            signingKey: configuration.signingKey,
            downgradePrevention: configuration.downgradePrevention,
            recoveryEntry: configuration.recoveryEntry,
            slots: slots,
            loader: loader,
            activeSlots: record.activeSlots,
            interruptedSwap: record.interrupted,
            trustedHashes: Set(record.trusted.compactMap(StateDirectory.bytes(fromHex:)))
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
            trusted: model.trustedHashes.map { $0.map { String(format: "%02x", $0) }.joined() }.sorted()
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
