import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPSimulator
import SMPTestSupport
import Testing

/// Builds valid MCUboot images (header, payload, SHA-256 TLV) of any size.
enum TestImage {
    static func make(version: String, image: Int = 0, size: Int = 4096) -> FirmwarePackage.Image {
        let parsed = ImageVersion(version) ?? ImageVersion(major: 9, minor: 9, revision: 9)
        let bytes = FactoryImage.make(version: parsed, image: image, payloadSize: max(64, size - 0x200 - 40))
        guard let built = try? MCUbootImage(bytes: bytes) else {
            preconditionFailure("FactoryImage produced bytes MCUbootImage refuses")
        }
        return FirmwarePackage.Image(built, imageIndex: image, slot: 1, fileName: "app\(image).bin")
    }
}

/// What a run of the engine produced.
struct UpgradeRun: Sendable {
    var events: [FirmwareUpgrade.Event] = []
    var error: (any Error)?

    var succeeded: Bool { error == nil && summary != nil }
    var summary: FirmwareUpgrade.Summary? {
        for case .completed(let summary) in events { return summary }
        return nil
    }
    var upgradeError: FirmwareUpgradeError? { error as? FirmwareUpgradeError }
    var resumedOffsets: [Int] {
        events.compactMap { if case .uploadResumed(_, let offset) = $0 { offset } else { nil } }
    }
    var warnings: [String] { events.compactMap { if case .warning(let text) = $0 { text } else { nil } } }
    var states: [FirmwareUpgrade.State] {
        events.compactMap { if case .stateChanged(_, let to) = $0 { to } else { nil } }
    }
}

/// The slot state each mode promises, by bootloader.
enum Promise: Equatable {
    case runningConfirmed
    case runningUnconfirmed
    /// In a slot and not running.
    case uploaded
    /// In a slot: a bootloader that boots the highest version runs it after any reset (a fault's
    /// included), so upload-only promises only that it is there.
    case present

    init(mode: FirmwareUpgrade.Mode, bootloader: BootloaderMode) {
        switch (bootloader, mode) {
        // Upload-only never resets, whatever the bootloader.
        case (.directXIP, .uploadOnly), (.ramLoad, .uploadOnly): self = .present
        case (_, .uploadOnly): self = .uploaded
        // No test there: the image is installed and runs (RAM load as DirectXIP; one slot
        // through the bootloader).
        case (.directXIP, _), (.ramLoad, _), (.singleSlot, _), (.firmwareLoader, _): self = .runningConfirmed
        case (.overwriteOnly, _): self = .runningConfirmed
        case (_, .testOnly): self = .runningUnconfirmed
        default: self = .runningConfirmed
        }
    }

    /// Whether the device's list shows the promise for every image.
    func isKept(by states: [ImageManagement.SlotState], images: [FirmwarePackage.Image]) -> Bool {
        images.allSatisfy { image in
            guard let entry = states.first(where: { $0.hash.map(Array.init) == image.hash }) else { return false }
            switch self {
            case .runningConfirmed: return entry.isActive && entry.isConfirmed
            case .runningUnconfirmed: return entry.isActive && !entry.isConfirmed
            case .uploaded: return !entry.isActive
            case .present: return true
            }
        }
    }
}

enum UpgradeHarness {
    /// Short timeouts, so that each answer a fault loses costs 150 ms: for tests that inject
    /// losses. On the simulated device's quiet clock (``device(_:)``, ``loopback(_:_:retries:lossy:)``)
    /// only a lost answer reaches them. On the real clock a loaded machine can reach them by
    /// accident, which such tests survive (a spurious timeout is one more lost answer) but tests
    /// of an exact path do not: those use ``patientClient``.
    static let client = SMPClient.Configuration(
        timeout: .milliseconds(150),
        retries: 4,
        busyBackoff: .milliseconds(2),
        firstSequence: 0
    )

    /// For tests where no answer is lost: timeouts a loaded machine cannot reach by accident.
    static let patientClient = SMPClient.Configuration(
        timeout: .seconds(3),
        retries: 2,
        busyBackoff: .milliseconds(2),
        firstSequence: 0
    )

    /// The engine's timing for tests where no answer is lost: a probe waits a second (the device
    /// is gone when one goes unanswered, so each reset costs that second).
    static func patientConfiguration(_ mode: FirmwareUpgrade.Mode, retries: Int = 6) -> FirmwareUpgrade.Configuration {
        var configuration = configuration(mode, retries: retries)
        configuration.firstChunkTimeout = .seconds(10)
        configuration.probeTimeout = .seconds(1)
        configuration.rebootTimeout = .seconds(10)
        configuration.reconnectTimeout = .seconds(60)
        return configuration
    }

    static func configuration(_ mode: FirmwareUpgrade.Mode, retries: Int = 6) -> FirmwareUpgrade.Configuration {
        FirmwareUpgrade.Configuration(
            mode: mode,
            window: 3,
            firstChunkTimeout: .milliseconds(500),
            probeTimeout: .milliseconds(150),
            probeInterval: .milliseconds(20),
            rebootTimeout: .seconds(1),
            reconnectTimeout: .seconds(10),
            reconnectInterval: .milliseconds(10),
            retries: retries,
            suitInstallTimeout: .seconds(5),
            suitPollInterval: .milliseconds(10)
        )
    }

    /// Runs an upgrade to the end; `started` gets the run before its first event; `onEvent` sees
    /// each event, behind the engine (events are buffered): to act at an exact moment, a test
    /// uses a ``HookedTransport``.
    static func run(
        _ upgrade: FirmwareUpgrade,
        images: [FirmwarePackage.Image],
        resources: [String: Data] = [:],
        started: @Sendable (FirmwareUpgradeRun) -> Void = { _ in },
        onEvent: @Sendable (FirmwareUpgrade.Event, FirmwareUpgradeRun) async -> Void = { _, _ in }
    ) async -> UpgradeRun {
        var result = UpgradeRun()
        let run = upgrade.run(images: images, resources: resources)
        started(run)
        do {
            for try await event in run {
                result.events.append(event)
                await onEvent(event, run)
            }
        } catch {
            result.error = error
        }
        return result
    }

    /// A simulated device that reboots quickly (10 ms after answering a reset, back 100 ms later),
    /// so that tests of what happens around resets do not wait a real device's second. It keeps
    /// a quiet clock (``QuietClock``) for the upgrades of it to time out on.
    static func device(_ configuration: SimulatedDevice.Configuration = .init()) -> SimulatedDevice {
        var fast = configuration
        fast.resetDelay = .milliseconds(10)
        fast.bootTime = .milliseconds(100)
        if fast.quietClock == nil { fast.quietClock = QuietClock() }
        return SimulatedDevice(configuration: fast)
    }

    /// An upgrade of `device` in-process, timed on its quiet clock if it has one: patient unless
    /// `lossy` (for tests whose faults lose answers).
    static func loopback(
        _ device: SimulatedDevice,
        _ mode: FirmwareUpgrade.Mode,
        retries: Int? = nil,
        lossy: Bool = false
    ) -> FirmwareUpgrade {
        upgrade(
            LoopbackTransport(device: device),
            mode,
            retries: retries,
            lossy: lossy,
            clock: device.configuration.quietClock
        )
    }

    /// The upgrade's retries for tests that lose answers and check that the upgrade still gets
    /// through in one run. On the real clock their answers time out after 150 ms, and on a loaded
    /// machine this process itself can stall for longer than an upload's silence limit (under a
    /// second here), which the engine takes as the device going silent and answers by
    /// reconnecting, spending a retry — seen beside stress-ng, one pass in five. What such a test
    /// checks is that the faults are got through, not how often the machine stalls. (On the
    /// device's quiet clock a stall times nothing out; the retries stay for the tests on the real
    /// clock.)
    static let lossyRetries = 20

    /// An upgrade over `transport`: patient unless `lossy` (which gets ``lossyRetries`` unless
    /// `retries` is given).
    static func upgrade(
        _ transport: any SMPTransport,
        _ mode: FirmwareUpgrade.Mode,
        retries: Int? = nil,
        lossy: Bool = false,
        clock: QuietClock? = nil
    ) -> FirmwareUpgrade {
        let retries = retries ?? (lossy ? lossyRetries : 6)
        return upgrade(
            transport,
            configuration: lossy ? configuration(mode, retries: retries) : patientConfiguration(mode, retries: retries),
            client: lossy ? client : patientClient,
            clock: clock
        )
    }

    /// An upgrade whose waits and timeouts (the engine's and its client's) run on `clock` — the
    /// simulated device's quiet clock, so that they fire for lost answers only — or on the real
    /// clock without one.
    static func upgrade(
        _ transport: any SMPTransport,
        configuration: FirmwareUpgrade.Configuration,
        client: SMPClient.Configuration,
        clock: QuietClock?
    ) -> FirmwareUpgrade {
        guard let clock else {
            return FirmwareUpgrade(transport: transport, configuration: configuration, clientConfiguration: client)
        }
        var client = client
        client.clock = SMPClock(clock)
        return FirmwareUpgrade(
            transport: transport,
            configuration: configuration,
            clientConfiguration: client,
            clock: clock
        )
    }

    static func images(count: Int, version: String = "2.0.0", size: Int = 4096) -> [FirmwarePackage.Image] {
        (0..<count).map { TestImage.make(version: version, image: $0, size: size) }
    }
}

@Suite struct FirmwareUpgradeIntegrationTests {

    struct Combination: Sendable, CustomTestStringConvertible {
        var mode: FirmwareUpgrade.Mode
        var bootloader: BootloaderMode
        var images: Int
        var testDescription: String { "\(mode) on \(bootloader), \(images) image(s)" }
    }

    static let combinations: [Combination] = FirmwareUpgrade.Mode.allCases.flatMap { mode in
        [BootloaderMode.swapUsingMove, .overwriteOnly, .directXIP, .directXIPWithRevert].flatMap { bootloader in
            [1, 2].map { Combination(mode: mode, bootloader: bootloader, images: $0) }
        }
    }

    /// Every mode × bootloader × image count ends in the promised slot state (loopback).
    @Test(arguments: combinations)
    func everyModeEndsInThePromisedState(_ combination: Combination) async throws {
        let device = UpgradeHarness.device(
            .init(bufferSize: 512, imageCount: combination.images, bootloaderMode: combination.bootloader)
        )
        let images = UpgradeHarness.images(count: combination.images)
        let run = await UpgradeHarness.run(UpgradeHarness.loopback(device, combination.mode), images: images)
        #expect(run.error == nil, "\(String(describing: run.error))")
        let states = await device.imageStates
        let promise = Promise(mode: combination.mode, bootloader: combination.bootloader)
        #expect(promise.isKept(by: states, images: images), "\(states)")
        #expect(await device.isRunning)
        let summary = try #require(run.summary)
        #expect(summary.after == states)
        #expect(summary.before.count == combination.images)
        // A second run finds nothing to do.
        let again = await UpgradeHarness.run(UpgradeHarness.loopback(device, combination.mode), images: images)
        #expect(again.error == nil, "\(String(describing: again.error))")
        #expect(again.summary?.isUpToDate == true)
    }

    @Test func progressCoversEveryByteWithRateAndState() async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512, imageCount: 2))
        let images = UpgradeHarness.images(count: 2, size: 6000)
        let run = await UpgradeHarness.run(UpgradeHarness.loopback(device, .testAndConfirm), images: images)
        #expect(run.error == nil)
        let progress = run.events.compactMap { if case .uploadProgress(let p) = $0 { p } else { nil } }
        let total = images.map(\.data.count).reduce(0, +)
        #expect(progress.last?.totalBytesConfirmed == total)
        #expect(progress.allSatisfy { $0.totalBytes == total })
        #expect(progress.map(\.totalBytesConfirmed) == progress.map(\.totalBytesConfirmed).sorted())
        #expect(Set(progress.map(\.image)) == [0, 1])
        #expect(
            run.states == [
                .requestingParameters, .readingBootloaderInfo, .validating, .uploading, .testing, .resetting,
                .waitingForReboot, .waitingForSwap, .reconnecting, .verifying, .confirming, .verifying, .succeeded,
            ]
        )
        #expect(run.summary?.uploadedBytes == total)
    }

    // MARK: - Faults

    struct FaultCase: Sendable, CustomTestStringConvertible {
        var name: String
        var faults: [Fault]
        var clearOnReconnect = false
        /// The fault loses answers (short timeouts keep each loss cheap); otherwise nothing is
        /// lost and the timeouts are patient.
        var losesAnswers = true
        var testDescription: String { name }

        /// Whether the fault can strike while the unconfirmed test image runs (a power loss then
        /// makes MCUboot revert it), or make DirectXIP with revert boot twice before the confirm.
        func mayRevert(on bootloader: BootloaderMode) -> Bool {
            faults.contains { if case .powerLoss(.atRequest) = $0 { true } else { false } }
                || (bootloader == .directXIPWithRevert && faults == [.powerLoss(.duringSwap)])
        }
    }

    static let faultCases: [FaultCase] = [
        FaultCase(name: "loss", faults: [.dropResponsesRandomly(probability: 0.1)]),
        FaultCase(name: "lost requests", faults: [.dropRequests(every: 7)]),
        FaultCase(
            name: "duplicated and reordered answers",
            faults: [.duplicateResponses(every: 3), .reorderResponses(every: 5)],
            losesAnswers: false
        ),
        FaultCase(name: "disconnect mid-upload", faults: [.disconnect(afterRequests: 9)], clearOnReconnect: true),
        FaultCase(name: "device reset mid-upload", faults: [.powerLoss(.duringUpload(atOffset: 3000))]),
        FaultCase(name: "power loss at the test", faults: [.powerLoss(.atRequest(40))]),
        FaultCase(name: "power loss during swap", faults: [.powerLoss(.duringSwap)]),
        FaultCase(name: "busy", faults: [.busy(count: 6)], losesAnswers: false),
        // The device's hash check fails the first upload; the engine uploads again. Only if the
        // answer saying so arrives: lost, nothing the device lists can tell (the list shows the
        // hash in the image's TLVs, not one of the data), and the run ends in a clean failure at
        // the test or the verify, as it did with short timeouts on a loaded machine.
        FaultCase(name: "corrupted flash write", faults: [.corruptFlash(atOffset: 3000)], losesAnswers: false),
        FaultCase(name: "disconnect on reset", faults: [.disconnectOnReset]),
    ]

    /// Faults in every phase: the upgrade succeeds with the new image confirmed, or fails with a
    /// ``FirmwareUpgradeError``; either way the device boots a valid image.
    @Test(arguments: faultCases, [BootloaderMode.swapUsingMove, .directXIPWithRevert])
    func faultsEndConfirmedOrInACleanFailure(_ fault: FaultCase, bootloader: BootloaderMode) async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512, imageCount: 1, bootloaderMode: bootloader))
        await device.setFaults(Faults(fault.faults, seed: 7))
        let images = UpgradeHarness.images(count: 1, size: 8192)
        let clear = fault.clearOnReconnect
        // Cleared as the engine connects again (it waits meanwhile), not when the consumer sees
        // the event behind it.
        let transport = HookedTransport(LoopbackTransport(device: device)) { moment in
            if clear, case .connect(let index) = moment, index > 0 { await device.setFaults(.none) }
        }
        // Short timeouts only where the fault loses answers, on the device's quiet clock.
        let upgrade = UpgradeHarness.upgrade(
            transport,
            configuration: fault.losesAnswers
                ? UpgradeHarness.configuration(.testAndConfirm, retries: UpgradeHarness.lossyRetries)
                : UpgradeHarness.patientConfiguration(.testAndConfirm),
            client: fault.losesAnswers ? UpgradeHarness.client : UpgradeHarness.patientClient,
            clock: device.configuration.quietClock
        )
        let run = await UpgradeHarness.run(upgrade, images: images)
        if run.error == nil {
            #expect(Promise.runningConfirmed.isKept(by: await device.imageStates, images: images))
        } else {
            #expect(run.upgradeError != nil, "not a FirmwareUpgradeError: \(String(describing: run.error))")
        }
        await device.setFaults(.none)
        if fault.mayRevert(on: bootloader) {
            // Power lost while the unconfirmed test image runs: MCUboot reverts it (swap) or erases
            // it (DirectXIP with revert), as it must. The run says so; running it again finishes.
            if let error = run.upgradeError {
                #expect([.imageMissingAfterReset, .imageNotActive].contains(error.code), "\(error)")
                #expect(error.code.category == .outcome)
                await device.waitUntilAnswering()
                let again = await UpgradeHarness.run(UpgradeHarness.loopback(device, .testAndConfirm), images: images)
                #expect(again.error == nil, "\(String(describing: again.error))")
                #expect(Promise.runningConfirmed.isKept(by: await device.imageStates, images: images))
            }
        } else {
            // These faults are all recoverable: the engine must get through them in one run.
            #expect(run.error == nil, "\(String(describing: run.error))")
        }
        await device.reset()
        #expect(await device.isRunning)
    }

    /// The slots observer is awaited before anything that could change the device: between its
    /// start and its end nothing is sent, however long it takes, and the first upload chunk comes
    /// after it (a fleet records there what the device ran, so that a kill mid-upload cannot lose
    /// it; recorded from the events, behind a busy reader, it was lost).
    @Test func theSlotsObserverIsAwaitedBeforeTheDeviceIsChanged() async throws {
        actor Log {
            var entries: [String] = []
            func add(_ entry: String) { entries.append(entry) }
        }
        let log = Log()
        let device = UpgradeHarness.device(.init(bufferSize: 512))
        let transport = HookedTransport(LoopbackTransport(device: device)) { moment in
            if case .send(let frame) = moment { await log.add("send \(frame.header.group) \(frame.header.command)") }
        }
        let upgrade = UpgradeHarness.upgrade(transport, .testAndConfirm)
        let run = upgrade.run(images: UpgradeHarness.images(count: 1, size: 8192)) { slots in
            await log.add("observer \(slots.map(\.version))")
            // A slow recorder: a run that did not wait for it would send meanwhile.
            for _ in 0..<1_000 { await Task.yield() }
            await log.add("observer done")
        }
        for try await _ in run {}
        let entries = await log.entries
        let start = try #require(entries.firstIndex { $0.hasPrefix("observer [") }, "\(entries)")
        #expect(
            entries.filter { $0.hasPrefix("observer [") } == ["observer [\"1.0.0\"]"],
            "once, with the slots first read"
        )
        #expect(entries[start + 1] == "observer done", "nothing sent while it ran: \(entries)")
        #expect(entries[start - 1] == "send \(SMPGroup.image) 0", "right after the image list: \(entries)")
        let firstChunk = try #require(entries.firstIndex(of: "send \(SMPGroup.image) 1"), "\(entries)")
        #expect(firstChunk > start + 1)
    }

    @Test func aDisconnectMidUploadResumesFromTheDeviceOffset() async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512))
        await device.setFaults(Faults([.disconnect(afterRequests: 12)]))
        let images = UpgradeHarness.images(count: 1, size: 16384)
        // The disconnect is a moment: gone when the engine connects again.
        let transport = HookedTransport(LoopbackTransport(device: device)) { moment in
            if case .connect(let index) = moment, index > 0 { await device.setFaults(.none) }
        }
        let upgrade = UpgradeHarness.upgrade(transport, .confirmOnly)
        let run = await UpgradeHarness.run(upgrade, images: images)
        #expect(run.error == nil, "\(String(describing: run.error))")
        // Every continuation after the disconnect resumed where the device stopped.
        #expect(!run.resumedOffsets.isEmpty)
        #expect(run.resumedOffsets.allSatisfy { $0 > 0 })
        let reconnected = try #require(run.states.firstIndex(of: .reconnecting))
        #expect(reconnected < (run.states.firstIndex(of: .confirming) ?? -1))
    }

    /// An upgrade that fails mid-upload and is started again continues the upload.
    @Test func aRestartedUpgradeResumesTheUpload() async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512))
        await device.setFaults(Faults([.disconnect(afterRequests: 14)]))
        let images = UpgradeHarness.images(count: 1, size: 16384)
        let first = await UpgradeHarness.run(
            UpgradeHarness.loopback(device, .testAndConfirm, retries: 0),
            images: images
        )
        let error = try #require(first.upgradeError)
        #expect(error.code == .linkFailed)
        #expect(error.state == .uploading)
        let session = try #require(await device.uploadSession)
        #expect(session.offset > 0)

        await device.setFaults(.none)
        let second = await UpgradeHarness.run(UpgradeHarness.loopback(device, .testAndConfirm), images: images)
        #expect(second.error == nil, "\(String(describing: second.error))")
        // The device's work queue may have written chunks it held when the link dropped, so the
        // session can have grown since it was read: resumed once, there or later.
        let resumed = try #require(second.resumedOffsets.first)
        #expect(second.resumedOffsets.count == 1)
        #expect(resumed >= session.offset)
        #expect(second.summary.map { $0.uploadedBytes } == images[0].data.count - resumed)
        #expect(Promise.runningConfirmed.isKept(by: await device.imageStates, images: images))
    }

    /// A device that answers the parameters but not bootloader info: assumed, said, never hung.
    @Test func aDeviceThatDoesNotAnswerBootloaderInfoIsTolerated() async throws {
        let device = UpgradeHarness.device()
        let images = UpgradeHarness.images(count: 1, size: 2048)
        // Silent from the engine's first bootloader info request to its image list request. Only
        // the first: a stall of the machine later in the run costs a reconnection, whose
        // bootloader info request silenced the device again for good (seen in a full run: the
        // upload then used up its 20 retries on a device that answered nothing).
        let silenced = Flag()
        let transport = HookedTransport(LoopbackTransport(device: device)) { moment in
            guard case .send(let frame) = moment else { return }
            if frame.header.group == .os && frame.header.command == 8 && !silenced.value {
                silenced.set()
                await device.setFaults(Faults([.dropRequests(every: 1)]))
            } else if frame.header.group == .image && frame.header.command == 0 {
                await device.setFaults(.none)
            }
        }
        let run = await UpgradeHarness.run(
            UpgradeHarness.upgrade(transport, .testAndConfirm, lossy: true, clock: device.configuration.quietClock),
            images: images
        )
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(run.warnings.contains { $0.contains("bootloader info") })
        #expect(run.warnings.contains { $0.contains("did not report its bootloader mode") })
        #expect(run.summary?.bootloaderMode == nil)
        #expect(Promise.runningConfirmed.isKept(by: await device.imageStates, images: images))
    }

    /// A device that answers nothing: the run ends at the first request, within the client's
    /// timeout × attempts, as a link failure.
    @Test func aSilentDeviceFailsAtTheFirstRequest() async throws {
        let device = UpgradeHarness.device()
        await device.setFaults(Faults([.dropRequests(every: 1)]))
        let run = await UpgradeHarness.run(
            UpgradeHarness.loopback(device, .testAndConfirm, lossy: true),
            images: UpgradeHarness.images(count: 1)
        )
        let error = try #require(run.upgradeError)
        #expect(error.code == .linkFailed)
        #expect(error.code.category == .link)
        #expect(error.state == .requestingParameters)
        #expect(run.states == [.requestingParameters, .failed])
    }

    /// A device that reports that it refuses downgrades (Zephyr 3.7 on; in every mode MCUboot
    /// enforces it, and DirectXIP, which boots the highest version): an older image is refused
    /// before anything is uploaded.
    @Test(arguments: [BootloaderMode.overwriteOnly, .swapUsingMove, .swapUsingScratch, .directXIPWithRevert])
    func anOlderImageIsRefusedBeforeTheFirstChunk(_ bootloader: BootloaderMode) async throws {
        let device = UpgradeHarness.device(
            .init(release: .latest, bootloaderMode: bootloader, downgradePrevention: true, factoryVersion: "3.0.0")
        )
        let images = UpgradeHarness.images(count: 1, version: "2.0.0")
        let run = await UpgradeHarness.run(UpgradeHarness.loopback(device, .confirmOnly), images: images)
        let error = try #require(run.upgradeError)
        #expect(error.code == .downgradeRefused)
        #expect(error.state == .validating)
        #expect(!run.states.contains(.uploading))
        #expect(await device.bootloader.slots[0][1].data.isEmpty)
        #expect(await device.imageStates.count == 1)
    }

    /// Insisting on the downgrade, or a device that cannot say it refuses them (Zephyr before
    /// 3.7): MCUboot erases the older image at the boot, and the run says so.
    @Test(arguments: [
        (BootloaderMode.overwriteOnly, ZephyrRelease.latest), (.swapUsingMove, .latest), (.swapUsingMove, .v3_4),
    ])
    func aDowngradeTheBootloaderRefusesIsErasedAndSaid(_ bootloader: BootloaderMode, _ release: ZephyrRelease)
        async throws
    {
        let device = UpgradeHarness.device(
            .init(release: release, bootloaderMode: bootloader, downgradePrevention: true, factoryVersion: "3.0.0")
        )
        var configuration = UpgradeHarness.patientConfiguration(.confirmOnly)
        configuration.allowDowngrade = true
        let upgrade = FirmwareUpgrade(
            transport: LoopbackTransport(device: device),
            configuration: configuration,
            clientConfiguration: UpgradeHarness.patientClient
        )
        let run = await UpgradeHarness.run(upgrade, images: UpgradeHarness.images(count: 1, version: "2.0.0"))
        let error = try #require(run.upgradeError)
        #expect(error.code == .imageMissingAfterReset)
        #expect(error.state == .verifying)
        // Only a device that says it refuses downgrades gets the warning before the upload.
        #expect(run.warnings.contains { $0.contains("will erase it") } == (release == .latest))
        #expect(await device.isRunning)
        #expect(await device.imageStates.first?.version == "3.0.0")
    }

    /// No bootloader under the application (the observed Zephyr server): after the one reset the
    /// image is still pending. The run stops, names the likely causes, and does not reset again.
    /// Nothing is lost here, so patient timeouts: with 150 ms ones a loaded machine lost the
    /// reset's answer, and the engine rightly reset once more (bootCount 3).
    @Test func anImageTheBootloaderDoesNotSwapFailsAfterOneReset() async throws {
        let device = UpgradeHarness.device(.init(bootloaderMode: .none))
        var configuration = UpgradeHarness.patientConfiguration(.testAndConfirm)
        configuration.rebootTimeout = .seconds(3)
        let upgrade = FirmwareUpgrade(
            transport: LoopbackTransport(device: device),
            configuration: configuration,
            clientConfiguration: UpgradeHarness.patientClient
        )
        let run = await UpgradeHarness.run(upgrade, images: UpgradeHarness.images(count: 1))
        let error = try #require(run.upgradeError)
        #expect(error.code == .notSwapped)
        #expect(error.code.category == .outcome)
        #expect(error.message.contains("did not swap"))
        #expect(error.message.contains("no MCUboot"))
        #expect(await device.bootCount == 2)
        #expect(await device.imageStates.contains { $0.slot == 1 && $0.isPending })
    }

    /// The answer to the reset is lost: the client does not send it again, the engine sees the
    /// device go away and come back, and the upgrade succeeds after exactly one reset.
    @Test func aLostResetAnswerStillEndsInTheUpgrade() async throws {
        let device = UpgradeHarness.device()
        let images = UpgradeHarness.images(count: 1)
        // Every answer lost from the reset on, until the engine connects again.
        let transport = HookedTransport(LoopbackTransport(device: device)) { moment in
            switch moment {
            case .send(let frame) where frame.header.group == .os && frame.header.command == 5:
                await device.setFaults(Faults([.dropResponses(every: 1)]))
            case .connect(let index) where index > 0: await device.setFaults(.none)
            default: break
            }
        }
        let run = await UpgradeHarness.run(
            UpgradeHarness.upgrade(transport, .confirmOnly, lossy: true, clock: device.configuration.quietClock),
            images: images
        )
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(run.warnings.contains { $0.contains("answer to the reset was lost") })
        #expect(await device.bootCount == 2)
        #expect(Promise.runningConfirmed.isKept(by: await device.imageStates, images: images))
    }

    /// With the device's real timing (it answers the reset, runs on 250 ms, is back after a
    /// second) the engine waits for the reboot instead of reading the old state.
    @Test func theObservedResetTimingIsWaitedFor() async throws {
        let device = SimulatedDevice(configuration: .init())
        let images = UpgradeHarness.images(count: 1)
        let run = await UpgradeHarness.run(UpgradeHarness.loopback(device, .testAndConfirm), images: images)
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(await device.bootCount == 2)
        #expect(Promise.runningConfirmed.isKept(by: await device.imageStates, images: images))
    }

    /// Another image marked for test in slot 1: a reset would boot it, so the upgrade stops before
    /// changing anything, with what holds the slot — in every mode, `revertPending` or not.
    @Test(arguments: FirmwareUpgrade.Mode.allCases)
    func aPendingImageInTheWayIsRefusedWithoutAReset(_ mode: FirmwareUpgrade.Mode) async throws {
        let device = UpgradeHarness.device()
        let other = UpgradeHarness.images(count: 1, version: "1.5.0")
        // Leave another image pending in slot 1.
        let leftover = await UpgradeHarness.run(UpgradeHarness.loopback(device, .uploadOnly), images: other)
        #expect(leftover.error == nil)
        let client = SMPClient(
            connection: try await LoopbackTransport(device: device).connect(),
            configuration: UpgradeHarness.patientClient
        )
        await client.start()
        _ = try await client.send(ImageManagement.StateWrite(hash: Data(other[0].hash), confirm: false))
        await client.close()
        let before = await device.imageStates
        let boots = await device.bootCount

        let images = UpgradeHarness.images(count: 1, version: "2.0.0")
        var configuration = UpgradeHarness.patientConfiguration(mode)
        configuration.revertPending = mode != .uploadOnly
        let upgrade = FirmwareUpgrade(
            transport: LoopbackTransport(device: device),
            configuration: configuration,
            clientConfiguration: UpgradeHarness.patientClient
        )
        let run = await UpgradeHarness.run(upgrade, images: images)
        #expect(run.upgradeError?.code == .slotBusy)
        #expect(run.upgradeError?.pendingBootChanges.map(\.kind) == [.test])
        #expect(await device.bootCount == boots)
        #expect(await device.imageStates == before)
        #expect(await device.timesHandled(OSManagement.Reset.self) == 0)
    }

    // MARK: - Control

    /// The pause is asked when the engine sends the chunk past 2 kB (the engine waits while the
    /// transport's hook runs), so it lands in the upload however late the consumer sees events.
    @Test func pauseAndResumeDuringTheUpload() async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 384))
        let images = UpgradeHarness.images(count: 1, size: 40_000)
        let paused = Flag()
        let current = RunBox()
        let transport = HookedTransport(LoopbackTransport(device: device)) { moment in
            guard case .send(let frame) = moment, frame.header.group == .image, frame.header.command == 1,
                let chunk = try? frame.decodeRequest(as: ImageManagement.Upload.self), chunk.offset > 2000,
                !paused.value
            else { return }
            paused.set()
            current.run?.pause()
        }
        let upgrade = UpgradeHarness.upgrade(transport, .confirmOnly)
        let run = await UpgradeHarness.run(
            upgrade,
            images: images,
            started: { current.run = $0 },
            onEvent: { event, run in
                if case .paused = event {
                    #expect(run.isPaused)
                    run.resume()
                }
            }
        )
        #expect(paused.value)
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(run.events.contains { if case .paused(.uploading) = $0 { true } else { false } })
        #expect(run.events.contains { if case .resumed(.uploading) = $0 { true } else { false } })
        #expect(!run.resumedOffsets.isEmpty)
        #expect(Promise.runningConfirmed.isKept(by: await device.imageStates, images: images))
    }

    /// Cancelled as the engine acts in the state (it waits meanwhile): the error names that
    /// state, or a later one the engine entered before it looked at the control.
    @Test(arguments: [FirmwareUpgrade.State.uploading, .testing, .reconnecting])
    func cancelEndsTheUpgradeInItsState(_ state: FirmwareUpgrade.State) async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 512))
        let current = RunBox()
        let transport = HookedTransport(LoopbackTransport(device: device)) { moment in
            let now: Bool
            switch (state, moment) {
            case (.uploading, .send(let frame)): now = frame.header.group == .image && frame.header.command == 1
            case (.testing, .send(let frame)):
                now = frame.header.group == .image && frame.header.command == 0 && frame.header.operation == .write
            case (.reconnecting, .connect(let index)): now = index > 0
            default: now = false
            }
            if now { current.run?.cancel() }
        }
        let run = await UpgradeHarness.run(
            UpgradeHarness.upgrade(transport, .testAndConfirm),
            images: UpgradeHarness.images(count: 1, size: 8192),
            started: { current.run = $0 }
        )
        let error = try #require(run.upgradeError)
        #expect(error.code == .cancelled)
        let reached = try #require(run.states.firstIndex(of: state))
        #expect(run.states[reached...].contains(error.state))
        #expect(run.states.last == .cancelled)
        await device.reset()
        #expect(await device.isRunning)
    }

    @Test func cancellingTheConsumingTaskStopsTheUpgrade() async throws {
        let device = UpgradeHarness.device(.init(bufferSize: 384, linkLatency: .milliseconds(2)))
        let upgrade = UpgradeHarness.loopback(device, .testAndConfirm)
        let images = UpgradeHarness.images(count: 1, size: 30000)
        let task = Task {
            var last: FirmwareUpgrade.Event?
            for try await event in upgrade.run(images: images) {
                last = event
                if case .uploadProgress = event { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return last
        }
        let last = try await task.value
        #expect(last.map { if case .completed = $0 { true } else { false } } != true)
        // No reset was sent, so nothing the device may still be handling can make the image run.
        let states = await device.imageStates
        #expect(!states.contains { $0.isActive && $0.hash.map(Array.init) == images[0].hash })
        await device.reset()
        #expect(await device.isRunning)
    }

    // MARK: - SUIT

    @Test func suitEnvelopeWithARequestedResource() async throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("MCUbootTests/Fixtures/rfc9124_example0.suit")
        let package = try FirmwarePackage(contentsOf: url)
        #expect(package.isSUIT)
        let device = SimulatedDevice(configuration: .init())
        let upgrade = UpgradeHarness.loopback(device, .confirmOnly)
        let served = Data(repeating: 0x42, count: 3000)
        let run = await UpgradeHarness.run(upgrade, images: package.images, resources: ["app.bin": served])
        #expect(run.error == nil, "\(String(describing: run.error))")
        #expect(run.warnings.contains { $0.contains("file://app.bin") })
        #expect(run.states.contains(.installing))

        // With a cache image: the envelope is deferred, the cache follows, then processing.
        let cache = FirmwarePackage.Image(
            imageIndex: 1,
            slot: 0,
            fileName: "cache.bin",
            content: .suitCache,
            data: Data(repeating: 0x17, count: 1500),
            hash: []
        )
        let deferred = await UpgradeHarness.run(
            UpgradeHarness.loopback(SimulatedDevice(), .confirmOnly),
            images: package.images + [cache],
            resources: ["app.bin": served]
        )
        #expect(deferred.error == nil, "\(String(describing: deferred.error))")
        let steps = deferred.events.compactMap { if case .planned(let plan) = $0 { plan.steps } else { nil } }.first
        #expect(
            steps == [
                .suitUploadEnvelope(packageIndex: 0, deferInstall: true), .suitUploadCache(packageIndex: 1),
                .suitProcess,
                .suitInstall(digest: package.images[0].hash),
            ]
        )

        // Without the resource: a clear failure.
        let missing = await UpgradeHarness.run(
            UpgradeHarness.loopback(SimulatedDevice(), .confirmOnly),
            images: package.images
        )
        #expect(missing.upgradeError?.code == .resourceNotFound)
    }

    // MARK: - Soak

    /// One round of the soak: what to upgrade, how, and what goes wrong.
    struct SoakRound: Sendable {
        var round: Int
        var bootloader: BootloaderMode
        var mode: FirmwareUpgrade.Mode
        var count: Int
        var faults: [Fault]

        /// The seeded rounds: the same ones every run (the first 200 are `swift test`'s).
        static func seeded(_ rounds: Int) -> [SoakRound] {
            var random = TestBytes.SeededGenerator(seed: 0x5EED_F00D)
            let bootloaders: [BootloaderMode] = [
                .swapUsingMove, .swapUsingScratch, .overwriteOnly, .directXIP, .directXIPWithRevert, .ramLoad,
                .singleSlot, .firmwareLoader,
            ]
            return (0..<rounds).map { round in
                let bootloader = bootloaders[Int(random.next() % UInt64(bootloaders.count))]
                let mode = FirmwareUpgrade.Mode.allCases[Int(random.next() % 4)]
                let count = bootloader == .firmwareLoader ? 1 : Int(random.next() % 2) + 1
                let faults: [Fault] =
                    switch random.next() % 11 {
                    case 0: []
                    case 1: [.dropResponsesRandomly(probability: 0.05)]
                    case 2: [.disconnect(afterRequests: Int(random.next() % 20) + 3)]
                    case 3: [.powerLoss(.duringUpload(atOffset: Int(random.next() % 2800) + 100))]
                    case 4: [.powerLoss(.duringSwapStep(Int(random.next() % 8)))]
                    case 5: [.busy(count: Int(random.next() % 8) + 1)]
                    case 6: [.powerLoss(.atRequest(Int(random.next() % 30) + 2))]
                    case 7: [.dropRequests(every: Int(random.next() % 5) + 3)]
                    case 8: [.deviceReset(atRequest: Int(random.next() % 30) + 2)]
                    case 9: [.loseAnswer(toRequest: Int(random.next() % 30) + 2)]
                    default: [.disconnectOnReset, .duplicateResponses(every: 4)]
                    }
                return SoakRound(round: round, bootloader: bootloader, mode: mode, count: count, faults: faults)
            }
        }

        /// Rounds of the soak: 200 in `swift test`; `MCUMGR_SOAK_ROUNDS` (scripts/soak.sh) for the
        /// benchmark run of 1,000.
        static var rounds: Int {
            ProcessInfo.processInfo.environment["MCUMGR_SOAK_ROUNDS"].flatMap(Int.init).map { max(1, $0) } ?? 200
        }

        enum Outcome: Sendable {
            case succeeded
            case failedCleanly(String)
            case wrongState(String)
            case notAnUpgradeError(String)
        }

        /// How a round left the device.
        enum Device: Sendable {
            /// It boots a valid image.
            case boots
            /// Nothing valid boots, but the recovery button brings serial recovery back.
            case recoverable
            /// Nothing valid boots, and nothing brings it back without a debugger.
            case bricked
        }

        /// Runs the round on its own device; reports how it ended and how it left the device.
        func run() async -> (outcome: Outcome, device: Device) {
            let images = UpgradeHarness.images(count: count, version: "2.\(round % 7).\(round)", size: 3000)
            let device = UpgradeHarness.device(
                .init(bufferSize: 512, imageCount: count, bootloaderMode: bootloader, seed: UInt64(round))
            )
            await device.setFaults(Faults(faults, seed: UInt64(round) &+ 1))
            let round = self.round
            var configuration = UpgradeHarness.configuration(mode)
            if bootloader.isSingleSlot {
                // One buffer in the bootloader: the window comes from the device; a halted device
                // shows only as a reconnection that times out.
                configuration.window = nil
                configuration.reconnectTimeout = .seconds(2)
            }
            // A disconnect fault is a moment, not a permanent state of the link: gone when the
            // engine connects again. (Replacing the faults restarts their counters, so only a set
            // with a disconnect is replaced.)
            let transport = HookedTransport(LoopbackTransport(device: device)) { moment in
                guard case .connect(let index) = moment, index > 0 else { return }
                let all = await device.faults.faults
                let rest = all.filter { if case .disconnect = $0 { false } else { true } }
                if rest.count != all.count { await device.setFaults(Faults(rest, seed: UInt64(round))) }
            }
            let upgrade = FirmwareUpgrade(
                transport: transport,
                configuration: configuration,
                clientConfiguration: UpgradeHarness.client
            )
            let run = await UpgradeHarness.run(upgrade, images: images)
            await device.setFaults(.none)
            await device.waitUntilAnswering()
            let outcome: Outcome
            if run.error == nil {
                let states = await device.imageStates
                outcome =
                    Promise(mode: mode, bootloader: bootloader).isKept(by: states, images: images)
                    ? .succeeded
                    : .wrongState("round \(round): \(mode) on \(bootloader) with \(faults) succeeded as \(states)")
            } else if let error = run.upgradeError {
                print("soak: round \(round) \(mode) on \(bootloader), \(count) image(s), \(faults): \(error)")
                outcome = .failedCleanly("\(error.code) while \(error.state)")
            } else {
                outcome = .notAnUpgradeError("round \(round): \(String(describing: run.error))")
            }
            await device.reset()
            if await device.isRunning { return (outcome, .boots) }
            return (outcome, await device.isRecoverable ? .recoverable : .bricked)
        }
    }

    /// A seeded soak of upgrades under mixed faults (200 here, 1,000 by scripts/soak.sh), eight
    /// at a time: every run succeeds in the promised state or fails with a clear error, and no
    /// device is left without a bootable image — or, updated through its bootloader, without its
    /// recovery.
    @Test func soakOfUpgradesUnderMixedFaults() async throws {
        let count = SoakRound.rounds
        let rounds = SoakRound.seeded(count)
        let clock = ContinuousClock()
        let start = clock.now
        typealias Result = (round: SoakRound, outcome: SoakRound.Outcome, device: SoakRound.Device)
        let results = await withTaskGroup(of: Result.self) { group in
            var results: [Result] = []
            var pending = rounds[...]
            func add(_ round: SoakRound) {
                group.addTask {
                    let (outcome, device) = await round.run()
                    return (round, outcome, device)
                }
            }
            for round in pending.prefix(8) { add(round) }
            pending = pending.dropFirst(8)
            for await result in group {
                results.append(result)
                if let next = pending.popFirst() { add(next) }
            }
            return results
        }
        var succeeded = 0
        var failedCleanly = 0
        var failures: [String: Int] = [:]
        for result in results {
            switch result.outcome {
            case .succeeded: succeeded += 1
            case .failedCleanly(let reason):
                failedCleanly += 1
                failures[reason, default: 0] += 1
            case .wrongState(let text): Issue.record("\(text)")
            case .notAnUpgradeError(let text): Issue.record("not a FirmwareUpgradeError: \(text)")
            }
        }
        let bricked = results.filter { if case .bricked = $0.device { true } else { false } }.count
        let recoverable = results.filter { if case .recoverable = $0.device { true } else { false } }.count
        print(
            "soak: \(count) upgrades in \(clock.now - start) — succeeded \(succeeded), failed cleanly \(failedCleanly), "
                + "halted but recoverable \(recoverable), bricked \(bricked)"
        )
        for (reason, count) in failures.sorted(by: { $0.key < $1.key }) { print("soak: failed \(count)× \(reason)") }
        #expect(bricked == 0)
        #expect(succeeded + failedCleanly == count)
        #expect(succeeded > failedCleanly)
        // Only a device updated through its bootloader can be left halted (and then recoverable).
        let halted = results.filter { if case .boots = $0.device { false } else { true } }.map(\.round)
        let unexpected = halted.filter { !$0.bootloader.isSingleSlot }
        #expect(unexpected.isEmpty, "\(unexpected)")
    }
}

/// The run a transport hook acts on, set once the run is made.
final class RunBox: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var value: FirmwareUpgradeRun?
    var run: FirmwareUpgradeRun? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// A flag set from a `@Sendable` closure.
final class Flag: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var isSet = false
    var value: Bool { lock.withLock { isSet } }
    func set() { lock.withLock { isSet = true } }
}
