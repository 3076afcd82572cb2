import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPSimulator
import SMPTestSupport
import Testing

/// Upgrades of single-slot devices (through MCUboot's serial recovery or the firmware loader), of
/// devices already in serial recovery, and of RAM-load devices, against the simulated device.
@Suite struct SingleSlotUpgradeTests {
    static func configuration(
        _ mode: FirmwareUpgrade.Mode,
        recovery: Bool = false,
        retries: Int = 4
    ) -> FirmwareUpgrade.Configuration {
        var configuration = UpgradeHarness.patientConfiguration(mode, retries: retries)
        // The window comes from the device: serial recovery has one buffer.
        configuration.window = nil
        configuration.recovery = recovery
        return configuration
    }

    static func upgrade(
        _ device: SimulatedDevice,
        _ mode: FirmwareUpgrade.Mode = .confirmOnly,
        recovery: Bool = false
    ) -> FirmwareUpgrade {
        FirmwareUpgrade(
            transport: LoopbackTransport(device: device),
            configuration: configuration(mode, recovery: recovery),
            clientConfiguration: UpgradeHarness.patientClient
        )
    }

    /// The application runs every package image, from slot 0.
    static func runsNewImages(_ device: SimulatedDevice, _ images: [FirmwarePackage.Image]) async -> Bool {
        let states = await device.imageStates
        return await device.stage == .application
            && images.allSatisfy { image in
                states.contains { $0.hash.map(Array.init) == image.hash && $0.isActive && $0.slot == 0 }
            }
    }

    typealias Combination = FirmwareUpgradeIntegrationTests.Combination

    static let combinations: [Combination] = [.testAndConfirm, .confirmOnly, .testOnly].flatMap { mode in
        [
            Combination(mode: mode, bootloader: .singleSlot, images: 1),
            Combination(mode: mode, bootloader: .singleSlot, images: 2),
            Combination(mode: mode, bootloader: .firmwareLoader, images: 1),
        ]
    }

    @Test(
        "single-slot and firmware-loader devices: reset into the bootloader, upload, reset, the new image runs",
        arguments: combinations
    )
    func throughTheBootloader(_ combination: Combination) async throws {
        let device = UpgradeHarness.device(
            .init(bufferSize: 512, imageCount: combination.images, bootloaderMode: combination.bootloader)
        )
        let images = UpgradeHarness.images(count: combination.images)
        let run = await UpgradeHarness.run(Self.upgrade(device, combination.mode), images: images)
        #expect(run.error == nil, "\(String(describing: run.error))")
        let states = await device.imageStates
        #expect(await Self.runsNewImages(device, images), "\(states)")
        #expect(run.states.contains(.enteringBootloader))
        #expect(await device.timesHandled(OSManagement.Reset.self) == 2)
        if combination.mode != .confirmOnly { #expect(!run.warnings.isEmpty) }
        let again = await UpgradeHarness.run(Self.upgrade(device, combination.mode), images: images)
        #expect(again.summary?.isUpToDate == true, "\(String(describing: again.error))")
    }

    /// Upload-only never resets, and a single-slot device is written from its bootloader, which
    /// takes a reset: refused before anything is sent that changes the device.
    @Test(arguments: [BootloaderMode.singleSlot, .firmwareLoader])
    func uploadOnlyIsRefusedWhileTheApplicationRuns(bootloader: BootloaderMode) async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512, bootloaderMode: bootloader))
        let before = await device.imageStates
        let run = await UpgradeHarness.run(Self.upgrade(device, .uploadOnly), images: UpgradeHarness.images(count: 1))
        #expect(run.upgradeError?.code == .unsupported)
        #expect(run.upgradeError?.message.contains("without resetting it") == true)
        #expect(await device.timesHandled(OSManagement.Reset.self) == 0)
        #expect(await device.timesHandled(ImageManagement.Upload.self) == 0)
        #expect(await device.imageStates == before)
    }

    @Test(
        "a device already in serial recovery: --recovery uploads, resets and verifies",
        arguments: [BootloaderMode.singleSlot, .swapUsingMove]
    )
    func alreadyInRecovery(bootloader: BootloaderMode) async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512, bootloaderMode: bootloader, startsInRecovery: true))
        let images = UpgradeHarness.images(count: 1)
        let run = await UpgradeHarness.run(Self.upgrade(device, recovery: true), images: images)
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(await Self.runsNewImages(device, images))
        #expect(!run.states.contains(.enteringBootloader))
        #expect(await device.timesHandled(OSManagement.Reset.self) == 1)
    }

    @Test("without --recovery, a device that answers like serial recovery is recognised and updated, with a warning")
    func recognisesRecovery() async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512, bootloaderMode: .singleSlot, startsInRecovery: true))
        let images = UpgradeHarness.images(count: 1)
        let run = await UpgradeHarness.run(Self.upgrade(device), images: images)
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(run.warnings.contains { $0.contains("serial recovery") })
        #expect(await Self.runsNewImages(device, images))
    }

    @Test("--recovery against a running application refuses before anything is sent that changes it")
    func recoveryFlagOnAnApplication() async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512, bootloaderMode: .singleSlot))
        let run = await UpgradeHarness.run(
            Self.upgrade(device, recovery: true),
            images: UpgradeHarness.images(count: 1)
        )
        #expect(run.upgradeError?.code == .bootloaderNotEntered)
        #expect(await device.timesHandled(OSManagement.Reset.self) == 0)
        #expect(await device.timesHandled(ImageManagement.Upload.self) == 0)
    }

    @Test(
        "a device without the retention boot mode comes back running its application: reset once, then a clear failure"
    )
    func bootModeIgnored() async throws {
        let device = UpgradeHarness.device(
            .init(bufferSize: 512, bootloaderMode: .singleSlot, retentionBootMode: false)
        )
        let run = await UpgradeHarness.run(Self.upgrade(device), images: UpgradeHarness.images(count: 1))
        let error = try #require(run.upgradeError)
        #expect(error.code == .bootloaderNotEntered)
        #expect(error.code.category == .deviceRefused)
        #expect(error.message.contains("--recovery"))
        #expect(await device.timesHandled(OSManagement.Reset.self) == 2)
        #expect(await device.stage == .application)
    }

    @Test(
        "an image MCUboot would not accept (unsigned, the device trusts a key) is caught before the reset; the device stays in recovery"
    )
    func unsignedCaughtInRecovery() async throws {
        // A key MCUboot trusts; the test images are not signed at all.
        let key = try ImagePublicKey(
            pem: """
                -----BEGIN PUBLIC KEY-----
                MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEJ/7qcXTBwem79aicHMZZkM6mezXO
                beWHFSsMTDjgGPkBABWaqPqC3bA2/81DKhjqMKccLmV+G+OBgOTOJB+uSw==
                -----END PUBLIC KEY-----
                """
        )
        let device = UpgradeHarness.device(.init(bufferSize: 512, bootloaderMode: .singleSlot, signingKey: key))
        let run = await UpgradeHarness.run(Self.upgrade(device), images: UpgradeHarness.images(count: 1))
        let error = try #require(run.upgradeError)
        #expect(error.code == .imageMissingAfterReset)
        #expect(error.state == .verifying)
        #expect(await device.stage == .serialRecovery)
        #expect(await device.timesHandled(OSManagement.Reset.self) == 1)
    }

    @Test("the answer to the reset into the bootloader is lost: it happened, it is not sent again")
    func lostEnterAnswer() async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512, bootloaderMode: .singleSlot))
        let images = UpgradeHarness.images(count: 1)
        // Request 1 params, 2–3 bootloader info, 4 image list, 5 the reset.
        await device.inject(.loseAnswer(toRequest: 5))
        let run = await UpgradeHarness.run(Self.upgrade(device), images: images)
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(await Self.runsNewImages(device, images))
        #expect(await device.timesHandled(OSManagement.Reset.self) == 2)
    }

    @Test(
        "RAM load: upload to the slot not running, reset, the highest version runs; an older package is refused up front",
        arguments: FirmwareUpgrade.Mode.allCases
    )
    func ramLoad(mode: FirmwareUpgrade.Mode) async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512, bootloaderMode: .ramLoad))
        let images = UpgradeHarness.images(count: 1)
        let run = await UpgradeHarness.run(Self.upgrade(device, mode), images: images)
        #expect(run.error == nil, "\(String(describing: run.error))")
        let states = await device.imageStates
        // Upload-only never resets: the image waits in slot 1 for whoever resets the device.
        let installed = mode != .uploadOnly
        #expect(
            states.contains { $0.hash.map(Array.init) == images[0].hash && $0.isActive == installed && $0.slot == 1 }
        )
        #expect(await device.timesHandled(OSManagement.Reset.self) == (installed ? 1 : 0))
        guard installed else { return }
        let older = UpgradeHarness.images(count: 1, version: "1.5.0")
        let uploads = await device.timesHandled(ImageManagement.Upload.self)
        let downgrade = await UpgradeHarness.run(Self.upgrade(device, mode), images: older)
        #expect(downgrade.upgradeError?.code == .downgradeRefused)
        #expect(await device.timesHandled(ImageManagement.Upload.self) == uploads)
    }
}

extension SingleSlotUpgradeTests {
    /// Where the fault strikes: the next request after the upgrade enters a state.
    enum Moment: String, CaseIterable, Sendable {
        /// Reconnecting after the reset into recovery: recovery's image list.
        case reconnecting
        /// The upload starting: the new client's parameters request, before the first chunk.
        case uploading
    }

    @Test(
        "a reset or power cut between the entry into serial recovery and the first write sends the device back to its application: it is entered again and the upgrade finishes in one run",
        arguments: Moment.allCases
    )
    func outOfTheBootloaderAndBack(moment: Moment) async throws {
        for fault in [Fault.deviceReset(atRequest: 1), .powerLoss(.atRequest(1))] {
            let device = UpgradeHarness.device(.init(bufferSize: 512, bootloaderMode: .singleSlot))
            let images = UpgradeHarness.images(count: 1)
            let struck = Flag()
            let entered = Flag()
            // Struck as the engine sends the moment's request (it waits meanwhile): recovery's
            // image list, or the upload's parameters request, after the reset into recovery.
            let transport = HookedTransport(LoopbackTransport(device: device)) { happening in
                guard case .send(let frame) = happening, !struck.value else { return }
                let (group, command) = (frame.header.group, frame.header.command)
                if group == .os && command == 5 { entered.set() }
                let request = moment == .reconnecting ? (SMPGroup.image, UInt8(0)) : (SMPGroup.os, UInt8(6))
                guard entered.value, group == request.0, command == request.1 else { return }
                struck.set()
                await device.inject(fault)
            }
            let upgrade = FirmwareUpgrade(
                transport: transport,
                configuration: Self.configuration(.confirmOnly, recovery: false),
                clientConfiguration: UpgradeHarness.patientClient
            )
            let run = await UpgradeHarness.run(upgrade, images: images)
            #expect(struck.value)
            #expect(run.error == nil, "\(moment), \(fault): \(String(describing: run.error))")
            // The device was found back in its application, and entered again.
            let said = moment == .reconnecting ? "resetting into it once more" : "left its bootloader"
            #expect(run.warnings.contains { $0.contains(said) }, "\(moment), \(fault): \(run.warnings)")
            #expect(await device.timesHandled(OSManagement.Reset.self) == 3)
            #expect(await Self.runsNewImages(device, images), "\(moment), \(fault)")
        }
    }
}
