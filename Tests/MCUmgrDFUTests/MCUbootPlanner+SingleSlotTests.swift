import Foundation
import MCUboot
import SMPCore
import Testing

@testable import MCUmgrDFU

/// Single-slot planning as a table: the device's list (application, serial recovery or firmware
/// loader) × the reported mode → the exact command sequence.
@Suite struct MCUbootPlannerSingleSlotTests {
    typealias Step = FirmwareUpgradePlan.Step
    static let b = Slots.hash(Slots.b)
    static let c = Slots.hash(Slots.c)
    static let upload0: Step = .upload(imageIndex: 0, packageIndex: 0)
    static let application = Slots.entry(nil, 0, Slots.a, "ac")
    /// What serial recovery lists: no flags at all.
    static func recovery(_ byte: UInt8, image: Int? = nil) -> ImageManagement.SlotState {
        Slots.entry(image, 0, byte)
    }
    /// The firmware loader runs from slot 1 and lists the application's slot 0.
    static let loader = Slots.entry(nil, 1, Slots.c, "ac")

    struct Row: Sendable, CustomTestStringConvertible {
        var name: String
        var slots: [ImageManagement.SlotState]
        var bootloader: OSManagement.MCUbootMode?
        var recovery = false
        var actions: [FirmwarePlanAction]
        var steps: [Step]
        var testDescription: String { name }
    }
    typealias FirmwarePlanAction = FirmwareUpgradePlan.ImagePlan.Action

    static let rows: [Row] = [
        Row(
            name: "single application running: enter the bootloader, upload, check it is listed, reset, verify",
            slots: [application],
            bootloader: .singleApplication,
            actions: [.upload],
            steps: [.enterBootloader, upload0, .verify(.listed), .reset, .verify(.active)]
        ),
        Row(
            name: "firmware loader mode, application running: the same",
            slots: [application],
            bootloader: .firmwareLoader,
            actions: [.upload],
            steps: [.enterBootloader, upload0, .verify(.listed), .reset, .verify(.active)]
        ),
        Row(
            name: "the loader runs (slot 1 active): no reset into it",
            slots: [Slots.entry(nil, 0, Slots.a), loader],
            bootloader: .firmwareLoader,
            actions: [.upload],
            steps: [upload0, .verify(.listed), .reset, .verify(.active)]
        ),
        Row(
            name: "serial recovery, asked for: upload, listed, reset, verify",
            slots: [recovery(Slots.a)],
            bootloader: nil,
            recovery: true,
            actions: [.upload],
            steps: [upload0, .verify(.listed), .reset, .verify(.active)]
        ),
        Row(
            name: "serial recovery with nothing valid (empty list), recognised without the flag",
            slots: [],
            bootloader: nil,
            actions: [.upload],
            steps: [upload0, .verify(.listed), .reset, .verify(.active)]
        ),
        Row(
            name: "serial recovery already holding the image: only the reset",
            slots: [recovery(Slots.b)],
            bootloader: nil,
            recovery: true,
            actions: [.alreadyUploaded],
            steps: [.verify(.listed), .reset, .verify(.active)]
        ),
        Row(
            name: "the application already runs the image: nothing to do",
            slots: [Slots.entry(nil, 0, Slots.b, "ac")],
            bootloader: .singleApplication,
            actions: [.skip],
            steps: []
        ),
        Row(
            name: "single-slot RAM load is single-slot too",
            slots: [application],
            bootloader: .singleSlotRAMLoad,
            actions: [.upload],
            steps: [.enterBootloader, upload0, .verify(.listed), .reset, .verify(.active)]
        ),
    ]

    static func plan(
        _ row: Row,
        mode: FirmwareUpgrade.Mode = .confirmOnly,
        images: [FirmwarePackage.Image] = [Slots.image(Slots.b)]
    )
        throws(PlanningFailure) -> FirmwareUpgradePlan
    {
        try MCUbootPlanner(images: images).plan(
            PlanningContext(
                slots: row.slots,
                bootloaderMode: row.bootloader,
                noDowngrade: false,
                configuration: .init(mode: mode, recovery: row.recovery)
            )
        )
    }

    @Test(arguments: rows)
    func table(_ row: Row) throws {
        let plan = try Self.plan(row)
        #expect(plan.images.map(\.action) == row.actions)
        #expect(plan.steps == row.steps)
        #expect(plan.images.allSatisfy { $0.slot == 0 })
    }

    @Test(
        "every mode but upload-only installs for good; all but confirm-only say so",
        arguments: [FirmwareUpgrade.Mode.testAndConfirm, .confirmOnly, .testOnly]
    )
    func modes(mode: FirmwareUpgrade.Mode) throws {
        let plan = try Self.plan(Self.rows[0], mode: mode)
        #expect(plan.steps == Self.rows[0].steps)
        #expect(plan.mode == .confirmOnly)
        #expect(plan.warnings.isEmpty == (mode == .confirmOnly))
    }

    /// Upload-only never resets: refused while the application runs (the bootloader is entered
    /// by a reset); in the bootloader already, it uploads and leaves the device there.
    @Test func uploadOnlyNeverResets() throws {
        #expect {
            _ = try Self.plan(Self.rows[0], mode: .uploadOnly)
        } throws: { error in
            (error as? PlanningFailure)?.code == .unsupported
        }
        let inRecovery = try Self.plan(Self.rows[3], mode: .uploadOnly)
        #expect(inRecovery.steps == [Self.upload0, .verify(.listed)])
        #expect(inRecovery.mode == .uploadOnly)
        #expect(!inRecovery.resets)
        #expect(inRecovery.warnings.contains { $0.contains("stays in its bootloader") })
    }

    @Test("two images: one reset into the bootloader and one reset out, each image to its primary slot")
    func twoImages() throws {
        let row = Row(
            name: "two",
            slots: [Slots.entry(0, 0, Slots.a, "ac"), Slots.entry(1, 0, Slots.b, "ac")],
            bootloader: .singleApplication,
            actions: [],
            steps: []
        )
        let plan = try Self.plan(row, images: [Slots.image(Slots.c, index: 0), Slots.image(Slots.b, index: 1)])
        #expect(plan.images.map(\.action) == [.upload, .skip])
        #expect(plan.steps == [.enterBootloader, Self.upload0, .verify(.listed), .reset, .verify(.active)])
    }

    @Test("--recovery while the application runs is refused before anything is sent")
    func recoveryFlagWithApplication() {
        var row = Self.rows[0]
        row.recovery = true
        #expect(throws: PlanningFailure.self) { try Self.plan(row) }
        do {
            _ = try Self.plan(row)
        } catch {
            #expect(error.code == .bootloaderNotEntered)
            #expect(error.message.contains("without --recovery"))
        }
    }

    @Test("--recovery on an application that already runs the package: nothing to do, with a warning")
    func recoveryFlagAlreadyDone() throws {
        var row = Self.rows[6]
        row.recovery = true
        let plan = try Self.plan(row)
        #expect(plan.steps.isEmpty)
        #expect(plan.warnings.contains { $0.contains("already runs the package") })
    }

    @Test("a device that names a swap bootloader is not taken for serial recovery, even with nothing active")
    func swapDeviceNotRecovery() throws {
        let row = Row(
            name: "swap",
            slots: [Slots.entry(nil, 0, Slots.a, "c")],
            bootloader: .swapUsingMove,
            actions: [],
            steps: []
        )
        let plan = try Self.plan(row)
        #expect(plan.steps.first == .upload(imageIndex: 0, packageIndex: 0))
        #expect(!plan.steps.contains(.enterBootloader))
    }
}
