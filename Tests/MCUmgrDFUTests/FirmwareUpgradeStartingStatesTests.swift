import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPSimulator
import Testing

/// Every mode from every starting state of the slots, on the simulated device (Zephyr's image
/// manager over MCUboot's swap): upload-only never resets; a revert happens only with
/// `revertPending`; an image marked for the next boot is never booted by the upgrade; a refusal
/// leaves the device exactly as it was.
@Suite struct FirmwareUpgradeStartingStatesTests {
    typealias Mode = FirmwareUpgrade.Mode
    typealias Start = MCUbootPlannerStepsTests.Start

    /// The package: B, version 2.0.0. C (1.5.0) is another image the device was left with.
    static let package = UpgradeHarness.images(count: 1, version: "2.0.0")
    static let other = UpgradeHarness.images(count: 1, version: "1.5.0")

    /// A device in `start`, made the way people get there: earlier upgrades and image commands.
    static func device(_ start: Start) async throws -> SimulatedDevice {
        let device = UpgradeHarness.device()
        switch start {
        case .fresh:
            break
        case .testPending, .confirmedPermanent:
            _ = await UpgradeHarness.run(UpgradeHarness.loopback(device, .uploadOnly), images: other)
            let client = SMPClient(
                connection: try await LoopbackTransport(device: device).connect(),
                configuration: UpgradeHarness.patientClient
            )
            await client.start()
            let confirm = start == .confirmedPermanent
            _ = try await client.send(ImageManagement.StateWrite(hash: Data(other[0].hash), confirm: confirm))
            await client.close()
        case .runningUnconfirmed:
            _ = await UpgradeHarness.run(UpgradeHarness.loopback(device, .testOnly), images: package)
        case .revertTargetPresent:
            _ = await UpgradeHarness.run(UpgradeHarness.loopback(device, .testOnly), images: other)
        case .packageIsRevertTarget:
            // B installed for good, then C tested on top of it: B is C's revert target.
            _ = await UpgradeHarness.run(UpgradeHarness.loopback(device, .confirmOnly), images: package)
            _ = await UpgradeHarness.run(UpgradeHarness.loopback(device, .testOnly), images: other)
        }
        await device.waitUntilAnswering()
        return device
    }

    /// What the run must end with, and how many resets it may send.
    static func expected(_ start: Start, _ mode: Mode, revertPending: Bool) -> (refused: Bool, resets: Int) {
        switch MCUbootPlannerStepsTests.expected(start, mode, revertPending: revertPending) {
        case .refused: (true, 0)
        case .revert: (false, start == .packageIsRevertTarget ? 1 : 2)
        case .steps(let steps): (false, steps.contains(.reset) ? 1 : 0)
        }
    }

    static let combinations = MCUbootPlannerStepsTests.combinations.filter { start, mode, revertPending in
        // The command line refuses --revert-pending with upload-only; the library ignores it there.
        !(mode == .uploadOnly && revertPending)
    }

    @Test(arguments: combinations)
    func everyModeFromEveryStart(_ start: Start, _ mode: Mode, _ revertPending: Bool) async throws {
        let device = try await Self.device(start)
        let before = await device.imageStates
        let resetsBefore = await device.timesHandled(OSManagement.Reset.self)
        var configuration = UpgradeHarness.patientConfiguration(mode)
        configuration.revertPending = revertPending
        let upgrade = FirmwareUpgrade(
            transport: LoopbackTransport(device: device),
            configuration: configuration,
            clientConfiguration: UpgradeHarness.patientClient
        )
        let run = await UpgradeHarness.run(upgrade, images: Self.package)
        let expected = Self.expected(start, mode, revertPending: revertPending)
        let resets = await device.timesHandled(OSManagement.Reset.self) - resetsBefore
        #expect(resets == expected.resets, "resets")
        if expected.refused {
            #expect(run.upgradeError?.code == .slotBusy, "\(String(describing: run.error))")
            #expect(run.upgradeError?.pendingBootChanges.isEmpty == false)
            #expect(await device.imageStates == before, "a refusal changed the device")
        } else {
            #expect(run.error == nil, "\(String(describing: run.error))")
            // Brought back by the revert, B runs as it was before C's test: confirmed.
            let promise =
                start == .packageIsRevertTarget && mode == .testOnly
                ? .runningConfirmed : Promise(mode: mode, bootloader: .swapUsingMove)
            let after = await device.imageStates
            // A test image of the package already running stays so in test-only and upload-only.
            let kept =
                start == .runningUnconfirmed && (mode == .testOnly || mode == .uploadOnly)
                ? after == before : promise.isKept(by: after, images: Self.package)
            #expect(kept, "\(after)")
        }
    }
}
