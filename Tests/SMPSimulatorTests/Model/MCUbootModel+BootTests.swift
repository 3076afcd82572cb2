import Foundation
import MCUboot
import SMPCore
import SMPTestSupport
import Testing

@testable import SMPSimulator

/// MCUboot's entry into serial recovery and the firmware loader, and the RAM-load and
/// firmware-loader modes, as the model boots them.
@Suite("MCUbootModel boot")
struct MCUbootModelBootTests {
    static func model(_ mode: BootloaderMode, entry: MCUbootModel.RecoveryEntry = .init()) -> MCUbootModel {
        MCUbootModel(
            mode: mode,
            imageCount: 1,
            slotSize: 0x40000,
            factoryImages: [FactoryImage.make(version: ImageVersion(major: 1, minor: 0, revision: 0))],
            recoveryEntry: entry
        )
    }

    static func place(_ bytes: [UInt8], in model: inout MCUbootModel, slot: Int) {
        model.erase(image: 0, slot: slot)
        model.write(image: 0, slot: slot, offset: 0, bytes: bytes)
    }

    struct EntryRow: Sendable, CustomStringConvertible {
        var mode: BootloaderMode
        var entry: MCUbootModel.RecoveryEntry
        var applicationValid: Bool
        var request: BootRequest
        var expected: BootStage
        var description: String {
            "\(mode), \(applicationValid ? "valid" : "broken") application, \(request), \(entry) → \(expected)"
        }
    }

    static let noRecovery = MCUbootModel.RecoveryEntry(serialRecovery: false)
    static let noBootMode = MCUbootModel.RecoveryEntry(bootMode: false)
    static let fallback = MCUbootModel.RecoveryEntry(withoutApplication: true)

    static let entryTable: [EntryRow] = [
        EntryRow(mode: .singleSlot, entry: .init(), applicationValid: true, request: .normal, expected: .application),
        EntryRow(
            mode: .singleSlot,
            entry: .init(),
            applicationValid: true,
            request: .bootMode,
            expected: .serialRecovery
        ),
        EntryRow(
            mode: .singleSlot,
            entry: .init(),
            applicationValid: true,
            request: .button,
            expected: .serialRecovery
        ),
        EntryRow(
            mode: .singleSlot,
            entry: noBootMode,
            applicationValid: true,
            request: .bootMode,
            expected: .application
        ),
        EntryRow(
            mode: .singleSlot,
            entry: noBootMode,
            applicationValid: true,
            request: .button,
            expected: .serialRecovery
        ),
        // Nothing valid: MCUboot hangs unless built to fall back on recovery; the button still works.
        EntryRow(mode: .singleSlot, entry: .init(), applicationValid: false, request: .normal, expected: .halted),
        EntryRow(
            mode: .singleSlot,
            entry: fallback,
            applicationValid: false,
            request: .normal,
            expected: .serialRecovery
        ),
        EntryRow(
            mode: .singleSlot,
            entry: .init(),
            applicationValid: false,
            request: .button,
            expected: .serialRecovery
        ),
        EntryRow(
            mode: .singleSlot,
            entry: .init(),
            applicationValid: false,
            request: .bootMode,
            expected: .serialRecovery
        ),
        EntryRow(
            mode: .singleSlot,
            entry: noRecovery,
            applicationValid: true,
            request: .button,
            expected: .application
        ),
        EntryRow(mode: .singleSlot, entry: noRecovery, applicationValid: false, request: .button, expected: .halted),
        EntryRow(
            mode: .swapUsingMove,
            entry: .init(),
            applicationValid: true,
            request: .bootMode,
            expected: .serialRecovery
        ),
        EntryRow(mode: .none, entry: .init(), applicationValid: true, request: .bootMode, expected: .application),
        EntryRow(mode: .none, entry: .init(), applicationValid: true, request: .button, expected: .application),
        EntryRow(
            mode: .firmwareLoader,
            entry: .init(),
            applicationValid: true,
            request: .normal,
            expected: .application
        ),
        EntryRow(
            mode: .firmwareLoader,
            entry: .init(),
            applicationValid: true,
            request: .bootMode,
            expected: .firmwareLoader
        ),
        EntryRow(
            mode: .firmwareLoader,
            entry: .init(),
            applicationValid: true,
            request: .button,
            expected: .firmwareLoader
        ),
        EntryRow(
            mode: .firmwareLoader,
            entry: noBootMode,
            applicationValid: true,
            request: .bootMode,
            expected: .application
        ),
        EntryRow(mode: .firmwareLoader, entry: .init(), applicationValid: false, request: .normal, expected: .halted),
        EntryRow(
            mode: .firmwareLoader,
            entry: fallback,
            applicationValid: false,
            request: .normal,
            expected: .firmwareLoader
        ),
    ]

    @Test("how MCUboot enters recovery or the loader", arguments: entryTable)
    func entry(row: EntryRow) {
        var model = Self.model(row.mode, entry: row.entry)
        if !row.applicationValid { Self.place(TestImages.corrupted("2.0.0"), in: &model, slot: 0) }
        model.boot(request: row.request)
        #expect(model.stage == row.expected)
        #expect(model.isRunning == (row.expected == .application || row.expected == .firmwareLoader))
    }

    @Test("the recovery button is read before the swap; the boot mode after it")
    func entryOrder() throws {
        for (request, swapped) in [(BootRequest.button, false), (.bootMode, true)] {
            var model = Self.model(.swapUsingMove)
            let update = TestImages.image("2.0.0")
            Self.place(update, in: &model, slot: 1)
            try model.setState(hash: Array(TestImages.hash(update)), confirm: true, allowConfirmNonActive: true).get()
            model.boot(request: request)
            #expect(model.stage == .serialRecovery)
            #expect((model.image(0, slot: 0)?.header.version.description == "2.0.0") == swapped, "\(request)")
        }
    }

    @Test(
        "the firmware loader runs from its own slot: Zephyr lists the application slot and itself, uploads go to the application"
    )
    func firmwareLoader() throws {
        var model = Self.model(.firmwareLoader)
        #expect(model.stateList().map(\.slot) == [0])
        #expect(model.uploadSlot(image: 0) == .failure(.noFreeSlot))
        model.boot(request: .bootMode)
        #expect(model.stage == .firmwareLoader)
        let list = model.stateList()
        #expect(list.map(\.slot) == [0, 1])
        #expect(list.map(\.isActive) == [false, true])
        #expect(try model.uploadSlot(image: 0).get() == 0)
        #expect(!model.isInUse(image: 0, slot: 0))
        Self.place(TestImages.image("2.0.0"), in: &model, slot: 0)
        model.boot()
        #expect(model.stage == .application)
        #expect(model.stateList().first?.version == "2.0.0")
        #expect(model.stateList().first?.isActive == true)
    }

    @Test(
        "RAM load: the upload takes the slot not running; the highest valid version is loaded; test marks are not read"
    )
    func ramLoad() throws {
        var model = Self.model(.ramLoad)
        #expect(try model.uploadSlot(image: 0).get() == 1)
        Self.place(TestImages.image("2.0.0"), in: &model, slot: 1)
        model.boot()
        #expect(model.activeSlots == [1])
        #expect(model.lastBootLog == ["image 0: load slot 1 into RAM"])
        #expect(try model.uploadSlot(image: 0).get() == 0)
        // An older image in the free slot is never loaded, marked or not.
        let older = TestImages.image("1.5.0")
        Self.place(older, in: &model, slot: 0)
        try model.setState(hash: Array(TestImages.hash(older)), confirm: true, allowConfirmNonActive: true).get()
        model.boot()
        #expect(model.activeSlots == [1])
        #expect(model.stateList().first { $0.isActive }?.version == "2.0.0")
    }
}
