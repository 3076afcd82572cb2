import Foundation
import Logging
import MCUboot
import SMPCore

/// A simulated SMP device that behaves like a Zephyr application under MCUboot.
///
/// Feed it whole SMP frames with ``handle(_:)`` (device semantics only) or ``exchange(_:)``
/// (device plus link faults and latency, what the servers and ``LoopbackTransport`` use). It
/// answers the way Zephyr's handlers do — key order, zcbor's indefinite maps, v1/v2 error shapes —
/// and its flash follows MCUboot: upload to the secondary slot, test or confirm, reset applies the
/// swap decision, an unconfirmed test image reverts at the following reset.
///
/// ```swift
/// let device = SimulatedDevice(configuration: .init(bootloaderMode: .swapUsingMove))
/// let replies = await device.handle(echoFrame)      // [[UInt8]]: zero replies = dropped
/// await device.inject(.dropResponses(every: 5))
/// ```
///
/// Requests are handled one at a time in arrival order, as Zephyr's SMP work queue does, even
/// when flash timing makes a handler wait.
public actor SimulatedDevice {
    /// The configuration the device was created with.
    public nonisolated let configuration: Configuration

    private var core: DeviceCore
    private var injector = FaultInjector(.none)
    private let store: StateDirectory?
    private let temporaryRoot: URL?
    private var offlineUntil: ContinuousClock.Instant?
    private var queueTail: Task<Void, Never>?
    private let logger = Logger(label: "mcumgr.simulator")

    /// Creates a device with a valid, confirmed factory image in slot 0 of every image, or with
    /// the flash, settings and files saved in ``Configuration/stateDirectory``.
    /// - Parameter configuration: buffers, bootloader, flash, link.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        let store = configuration.stateDirectory.map { StateDirectory(url: $0) }
        let filesRoot: URL
        if let store {
            filesRoot = store.filesRoot
            temporaryRoot = nil
        } else {
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("smp-simulator-\(UUID().uuidString)", isDirectory: true)
            filesRoot = folder.appendingPathComponent("lfs1", isDirectory: true)
            temporaryRoot = folder
        }
        self.store = store
        core = DeviceCore(
            configuration: configuration,
            filesRoot: filesRoot,
            restored: store?.loadFlash(configuration: configuration),
            settings: SettingsStore(saved: store?.loadSettings() ?? [:])
        )
        if let store {
            store.saveFlash(core.bootloader)
        }
    }

    deinit {
        if let temporaryRoot { try? FileManager.default.removeItem(at: temporaryRoot) }
    }

    // MARK: - Frames

    /// Handles one received message (a UDP datagram, a decoded serial packet) and returns the
    /// response frames: zero when Zephyr would drop the message (bad framing, a response, a
    /// frame larger than the buffer, power lost, device off).
    ///
    /// Device-level faults apply (``Fault/busy(count:)``, ``Fault/dropRequests(every:)``,
    /// ``Fault/powerLoss(_:)``); link faults (drop, duplicate, delay, reorder, corrupt,
    /// disconnect) apply only in ``exchange(_:)``.
    /// - Parameter frame: the message bytes.
    /// - Returns: the responses, in order.
    public func handle(_ frame: [UInt8]) async -> [[UInt8]] {
        await serialized(frame).responses
    }

    /// Handles a message as the link delivers it: ``handle(_:)`` plus the link faults and
    /// latency. Servers send each scheduled response after its delay and close the link when
    /// asked.
    /// - Parameter frame: the message bytes.
    /// - Returns: what to send and when.
    public func exchange(_ frame: [UInt8]) async -> LinkDelivery {
        let result = await serialized(frame)
        return injector.deliver(result.responses, latency: configuration.linkLatency, wasReset: result.reset)
    }

    private func serialized(_ frame: [UInt8]) async -> (responses: [[UInt8]], reset: Bool) {
        let previous = queueTail
        let work = Task { () -> (responses: [[UInt8]], reset: Bool) in
            await previous?.value
            return await self.process(frame)
        }
        queueTail = Task { _ = await work.value }
        return await work.value
    }

    private func process(_ frame: [UInt8]) async -> (responses: [[UInt8]], reset: Bool) {
        if let offlineUntil {
            if ContinuousClock.now < offlineUntil { return ([], false) }
            self.offlineUntil = nil
        }
        switch injector.admit() {
        case .drop:
            logger.debug("fault: request dropped")
            return ([], false)
        case .busy:
            return (core.busyResponse(to: frame).map { [$0] } ?? [], false)
        case .powerLoss:
            logger.debug("fault: power lost while handling a request")
            reboot()
            return ([], false)
        case .process:
            break
        }
        core.uploadPowerLossOffset = injector.powerLossUploadOffset
        core.flashCorruptionOffset = injector.flashCorruptionOffset
        let bootloaderBefore = core.bootloader.slots
        let settingsBefore = core.settings.saved
        let (responses, effects) = core.process(frame)
        if effects.powerLoss {
            injector.consumeUploadPowerLoss()
            logger.debug("fault: power lost during upload")
            reboot()
            return ([], false)
        }
        if effects.flashCorrupted {
            injector.consumeFlashCorruption()
            logger.debug("fault: a flash write stored a flipped bit")
        }
        if effects.flashTime > .zero { try? await Task.sleep(for: effects.flashTime) }
        if effects.reset {
            reboot()
        } else if let store {
            if core.upload == nil && core.bootloader.slots != bootloaderBefore { store.saveFlash(core.bootloader) }
            if core.settings.saved != settingsBefore { store.saveSettings(core.settings.saved) }
        }
        return (responses, effects.reset)
    }

    // MARK: - Power

    /// Resets the device as `os reset` does: RAM state is lost and MCUboot runs its decision.
    public func reset() {
        reboot()
    }

    private func reboot() {
        let interrupt = injector.takePowerLossDuringSwap()
        var moved = core.reboot(interruptingSwap: interrupt)
        if interrupt {
            // Power comes back: MCUboot resumes the swap from its status area.
            logger.debug("fault: power lost during swap; resuming at the next boot")
            moved += core.reboot(interruptingSwap: false)
        }
        for line in core.bootloader.lastBootLog { logger.debug("boot: \(line)") }
        if let rate = configuration.swapBytesPerSecond, rate > 0, moved > 0 {
            offlineUntil = ContinuousClock.now + .milliseconds(Int64(Double(moved) / rate * 1000))
        }
        if let store {
            store.saveFlash(core.bootloader)
            store.saveSettings(core.settings.saved)
        }
    }

    // MARK: - Faults

    /// Adds a fault to the active set.
    /// - Parameter fault: the fault.
    public func inject(_ fault: Fault) {
        var faults = injector.faults
        faults.faults.append(fault)
        injector = FaultInjector(faults)
    }

    /// Replaces the active faults (counters restart).
    /// - Parameter faults: the new set.
    public func setFaults(_ faults: Faults) {
        injector = FaultInjector(faults)
    }

    /// The active faults.
    public var faults: Faults { injector.faults }

    // MARK: - Inspection (tests, the CLI)

    /// The image state list Zephyr would report now.
    public var imageStates: [ImageManagement.SlotState] { core.bootloader.stateList() }

    /// The bootloader model: slots, trailers, active slots.
    public var bootloader: MCUbootModel { core.bootloader }

    /// How many times the device has booted (1 after creation).
    public var bootCount: Int { core.bootCount }

    /// Whether the application runs (false when MCUboot found nothing bootable).
    public var isRunning: Bool { core.bootloader.isRunning }

    /// The upload session in progress, if any.
    public var uploadSession: ImageUploadSession? { core.upload }

    /// The settings in effect.
    public var settings: [String: [UInt8]] { core.settings.runtime }

    /// The host folder holding `/lfs1`.
    public var fileSystemRoot: URL { core.files.root }

    /// The boot mode the last reset asked for (`boot_mode`), if any.
    public var lastBootMode: UInt8? { core.lastBootMode }
}
