import Foundation
import MCUboot
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
        let restored = try #require(store.loadFlash(configuration: configuration))
        #expect(restored.slots == model.slots)
        #expect(restored.activeSlots == model.activeSlots)
        #expect(restored.swapType(image: 0) == .test)
        #expect(store.loadFlash(configuration: .init(imageCount: 2, stateDirectory: folder)) == nil)
        #expect(store.loadFlash(configuration: .init(bootloaderMode: .overwriteOnly, stateDirectory: folder)) == nil)

        store.saveSettings(["a/b": [1, 2], "c": []])
        #expect(store.loadSettings() == ["a/b": [1, 2], "c": []])
        #expect(StateDirectory.bytes(fromHex: "0aff") == [0x0a, 0xff])
        #expect(StateDirectory.bytes(fromHex: "zz") == nil)
    }
}
