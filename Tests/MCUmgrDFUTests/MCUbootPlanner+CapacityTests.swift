import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import Testing

/// The images to upload against the slot sizes the device reports (image group command 6).
@Suite struct MCUbootPlannerCapacityTests {
    static func image(size: Int) -> FirmwarePackage.Image {
        var image = Slots.image(Slots.b)
        image.data = Data(repeating: 0xaa, count: size)
        return image
    }

    static func capacity(slot: UInt64, max: UInt64? = nil) -> [ImageManagement.SlotInfo.Image] {
        [.init(image: 0, slots: [.init(slot: 0, size: slot), .init(slot: 1, size: slot)], maxImageSize: max)]
    }

    /// size, slot size, max_image_size, mode → refused, warned.
    static let rows: [(Int, UInt64, UInt64?, OSManagement.MCUbootMode?, Bool, Bool)] = [
        (1000, 4096, nil, .swapUsingMove, false, false),
        (4096 - 432, 4096, nil, .swapUsingMove, false, false),
        (4096 - 431, 4096, nil, .swapUsingMove, false, true),
        (4096, 4096, nil, .swapUsingScratch, false, true),
        (4097, 4096, nil, .swapUsingMove, true, false),
        (4000, 4096, nil, nil, false, true),  // an unknown mode is planned as swap
        (4000, 4096, nil, .directXIPWithRevert, false, false),  // no copy at boot: no trailer guess
        (4000, 4096, 4000, .swapUsingMove, false, false),  // max_image_size counts the trailer
        (4001, 4096, 4000, .swapUsingMove, true, false),
    ]

    @Test(arguments: rows)
    func fitsTheSlot(
        _ size: Int,
        _ slot: UInt64,
        _ max: UInt64?,
        _ mode: OSManagement.MCUbootMode?,
        _ refused: Bool,
        _ warned: Bool
    ) {
        do {
            let plan = try MCUbootPlanner(images: [Self.image(size: size)]).plan(
                PlanningContext(
                    slots: [Slots.entry(nil, 0, Slots.a, "ac")],
                    bootloaderMode: mode,
                    noDowngrade: false,
                    configuration: .init(),
                    slotCapacities: Self.capacity(slot: slot, max: max)
                )
            )
            #expect(!refused, "planned")
            #expect(plan.warnings.contains { $0.contains("trailer") } == warned, "\(plan.warnings)")
        } catch {
            #expect(refused, "\(error.message)")
            #expect(error.code == .imageTooLarge)
            #expect(error.message.contains("is \(size) bytes and the device takes at most \(max ?? slot)"))
        }
    }

    /// No capacity known (a device without slot information): nothing is checked.
    @Test func withoutSlotInformationNothingIsChecked() throws {
        for capacities in [nil, []] as [[ImageManagement.SlotInfo.Image]?] {
            let plan = try MCUbootPlanner(images: [Self.image(size: 1 << 20)]).plan(
                PlanningContext(
                    slots: [Slots.entry(nil, 0, Slots.a, "ac")],
                    bootloaderMode: .swapUsingMove,
                    noDowngrade: false,
                    configuration: .init(),
                    slotCapacities: capacities
                )
            )
            #expect(plan.steps.first == .upload(imageIndex: 0, packageIndex: 0))
        }
    }
}
