import Foundation
import MCUboot
import SMPCore
import Testing

@testable import SMPSimulator

@Suite("StateDirectory")
struct StateDirectoryTests {
    @Test("flash and settings round trip; a different layout is not restored")
    func roundTrip() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = StateDirectory(url: folder)
        let configuration = SimulatedDevice.Configuration(stateDirectory: folder)
        var model = MCUbootModelTests.model(.swapUsingMove)
        MCUbootModelTests.place(TestImages.image("2.0.0"), in: &model)
        model.slots[0][1].trailer = SlotTrailer(magic: true)
        store.saveFlash(model)
        let restored = try #require(try store.loadFlash(configuration: configuration))
        #expect(restored.slots == model.slots)
        #expect(restored.activeSlots == model.activeSlots)
        #expect(restored.swapType(image: 0) == .test)
        #expect(try store.loadFlash(configuration: .init(imageCount: 2, stateDirectory: folder)) == nil)
        #expect(
            try store.loadFlash(configuration: .init(bootloaderMode: .overwriteOnly, stateDirectory: folder)) == nil
        )

        store.saveSettings(["a/b": [1, 2], "c": []])
        #expect(store.loadSettings() == ["a/b": [1, 2], "c": []])
        #expect(StateDirectory.bytes(fromHex: "0aff") == [0x0a, 0xff])
        #expect(StateDirectory.bytes(fromHex: "zz") == nil)
    }

    @Test("what runs is saved: a device in serial recovery or halted comes back so")
    func stageRoundTrip() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = StateDirectory(url: folder)
        let configuration = SimulatedDevice.Configuration(stateDirectory: folder)
        var model = MCUbootModelTests.model(.swapUsingMove)
        model.boot(request: .button)
        #expect(model.stage == .serialRecovery)
        store.saveFlash(model)
        #expect(try store.loadFlash(configuration: configuration)?.stage == .serialRecovery)

        model.erase(image: 0, slot: 0)
        model.boot()
        #expect(model.stage == .halted)
        store.saveFlash(model)
        #expect(try store.loadFlash(configuration: configuration)?.stage == .halted)
    }

    @Test("a stage this build of the bootloader cannot be in: the device powers on instead")
    func unreachableStageBoots() throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = StateDirectory(url: folder)
        var model = MCUbootModelTests.model(.swapUsingMove)
        model.boot(request: .button)
        store.saveFlash(model)
        var configuration = SimulatedDevice.Configuration(stateDirectory: folder)
        configuration.serialRecovery = nil
        let restored = try #require(try store.loadFlash(configuration: configuration))
        #expect(restored.stage == .application)
    }

    /// A change to a saved folder that the model could never have made.
    enum Damage: String, CaseIterable, Sendable {
        case notJSON, activeSlotCount, activeSlotOutOfRange, slotCount, slotTooLarge
        case swapLengths, swapScratchCut, swapStepsBeyond, swapOfMissingImage, swapInOverwriteMode

        /// Applies the damage to a folder holding a swap-using-move device with a swap
        /// interrupted after its fourth step.
        func apply(to folder: URL) throws {
            let file = folder.appendingPathComponent("flash.json")
            if self == .notJSON { return try Data("{\"mode\":".utf8).write(to: file) }
            if self == .slotTooLarge {
                return try Data(count: 0x40001).write(to: folder.appendingPathComponent("flash/image0-slot1.bin"))
            }
            var record = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
            var interrupted = try #require(record["interrupted"] as? [String: Any])
            var swap = try #require(interrupted["0"] as? [String: Any])
            switch self {
            case .activeSlotCount: record["activeSlots"] = [0, 0]
            case .activeSlotOutOfRange: record["activeSlots"] = [2]
            case .slotCount:
                record["trailers"] = [[try #require((record["trailers"] as? [Any])?.first as? [Any]).first]]
            case .swapLengths: swap["lengths"] = [4096]
            case .swapScratchCut: swap["scratch"] = [1, 2, 3]
            case .swapStepsBeyond: swap["stepsDone"] = 10_000
            case .swapOfMissingImage: interrupted["1"] = swap
            case .swapInOverwriteMode: record["mode"] = BootloaderMode.overwriteOnly.rawValue
            case .notJSON, .slotTooLarge: break
            }
            interrupted["0"] = swap
            record["interrupted"] = interrupted
            try JSONSerialization.data(withJSONObject: record).write(to: file)
        }
    }

    @Test(
        "damaged saved flash is refused with the reason, and a device started on it starts from the factory",
        arguments: Damage.allCases
    )
    func damagedFlash(damage: Damage) async throws {
        let folder = Self.folder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = StateDirectory(url: folder)
        var model = try MCUbootModelSwapTests.prepared(.init(mode: .swapUsingMove, scenario: .test, images: 1))
        model.boot(interruptingSwap: 4)
        #expect(model.interruptedSwap[0] != nil)
        store.saveFlash(model)
        let saved = SimulatedDevice.Configuration(stateDirectory: folder)
        #expect(try store.loadFlash(configuration: saved)?.interruptedSwap[0] != nil)
        let mode: BootloaderMode = damage == .swapInOverwriteMode ? .overwriteOnly : .swapUsingMove
        let configuration = SimulatedDevice.Configuration(bootloaderMode: mode, stateDirectory: folder)

        try damage.apply(to: folder)
        #expect {
            try configuration.checkStateDirectory()
        } throws: { error in
            "\(error)".contains("the saved flash is damaged") && "\(error)".contains("remove flash.json")
        }
        let device = SimulatedDevice(configuration: configuration)
        #expect(await device.bootloader.interruptedSwap.isEmpty)
        #expect(await device.imageStates.first?.version == "1.0.0")
    }

    static func folder() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID().uuidString)")
    }
}
