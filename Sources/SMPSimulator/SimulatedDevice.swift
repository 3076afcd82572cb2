import Foundation
import Logging
import MCUboot
import SMPCore
import SMPLink

/// A simulated SMP device that behaves like a Zephyr application under MCUboot.
///
/// Transports hand it whole SMP messages with ``receive(_:transmit:)`` — what a UDP datagram, a
/// decoded serial packet or a reassembled BLE write is to Zephyr — and it answers through the
/// `transmit` closure, with link faults and latency applied. It answers the way Zephyr's handlers
/// do (key order, zcbor's indefinite maps, v1/v2 error shapes) and its flash follows MCUboot:
/// upload to the secondary slot, test or confirm, reset applies the swap decision, an unconfirmed
/// test image reverts at the following reset.
///
/// It is as strict as the real device, resource limits included:
/// - one pool of ``Configuration/bufferCount`` buffers holds every request received and every
///   answer built; a request arriving at an empty pool is lost, and one whose answer finds the
///   pool empty is answered `{"rc": 2}` (ENOMEM) unprocessed;
/// - one work queue handles requests in arrival order, ``Configuration/requestProcessingTime``
///   each, so a burst waits in its buffers;
/// - `os reset` is answered, the device runs on for ``Configuration/resetDelay``, reboots, and
///   answers nothing until ``Configuration/bootTime`` later.
///
/// ```swift
/// let device = SimulatedDevice(configuration: .init(bootloaderMode: .swapUsingMove))
/// let replies = await device.handle(echoFrame)      // [[UInt8]]: zero replies = dropped
/// await device.inject(.dropResponses(every: 5))
/// ```
public actor SimulatedDevice {
    /// Sends the answers to one message over the link; the device holds the answers' buffers
    /// until it returns (a UART sends byte by byte; UDP hands the datagram to the stack).
    public typealias Transmit = @Sendable (LinkDelivery) async -> Void

    /// When the buffers of an answered request go back to the pool.
    public enum BufferRelease: Sendable, Hashable {
        /// When the answer is handed to the link: a UDP `sendto` copies it into the network
        /// stack, so the client cannot answer back before the buffers are free.
        case onHandOff
        /// When the link has sent the answer: Zephyr's UART transport writes byte by byte while
        /// the work queue waits.
        case afterTransmit
    }

    /// A buffer of the device's pool taken for a message being received (a serial packet or BLE
    /// write whose first part arrived). Lost with the device's RAM at a reboot.
    public struct ReceiveBuffer: Sendable, Hashable {
        fileprivate let boot: Int
    }

    /// The configuration the device was created with.
    public nonisolated let configuration: Configuration

    private enum Reply {
        case link(Transmit)
        case direct(CheckedContinuation<[[UInt8]], Never>)
    }

    private struct Queued {
        var message: [UInt8]
        /// The request's buffer; `nil` for ``handle(_:)``, which bypasses the pool.
        var buffer: ReceiveBuffer?
        var release: BufferRelease = .onHandOff
        var reply: Reply
    }

    private var core: DeviceCore
    private var injector = FaultInjector(.none)
    private let store: StateDirectory?
    private let temporaryRoot: URL?
    private var pool: BufferPool
    private var queue: [Queued] = []
    private var working = false
    /// Counts boots; work and buffers from an earlier boot are void.
    private var boot = 0
    /// On ``Configuration/clock``: when the device answers again after a reboot.
    private var offlineUntil: Duration?
    private var pendingReboot: Task<Void, Never>?
    private let logger = Logger(label: "mcumgr.simulator")

    /// Requests lost because every buffer was held when they arrived.
    public private(set) var requestsDroppedForBuffers = 0
    /// Requests answered `ENOMEM` because no buffer was free for their answer.
    public private(set) var requestsRefusedForBuffers = 0

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
        var restored: MCUbootModel?
        do {
            restored = try store?.loadFlash(configuration: configuration)
        } catch {
            // The command line refuses such a folder up front (checkStateDirectory); here the
            // device starts as it left the factory, and says so.
            Logger(label: "mcumgr.simulator").warning("\(error); starting from the factory images")
        }
        let core = DeviceCore(
            configuration: configuration,
            filesRoot: filesRoot,
            restored: restored,
            settings: SettingsStore(saved: store?.loadSettings() ?? [:])
        )
        self.core = core
        pool = Self.pool(for: core.bootloader.stage, configuration)
        if let store {
            store.saveFlash(core.bootloader)
        }
    }

    /// The pool of whatever runs: Zephyr's `buf_count` buffers, or the single receive buffer of
    /// MCUboot's serial recovery (which reads one message, handles it, answers from a buffer of
    /// its own, and only then reads again).
    private static func pool(for stage: BootStage, _ configuration: Configuration) -> BufferPool {
        guard configuration.limitsBuffers else { return BufferPool(capacity: nil) }
        return BufferPool(capacity: stage == .serialRecovery ? 1 : configuration.bufferCount)
    }

    deinit {
        pendingReboot?.cancel()
        // Only a device that stored a file made its folder (``FileSystemSandbox``).
        if let temporaryRoot, FileManager.default.fileExists(atPath: temporaryRoot.path) {
            try? FileManager.default.removeItem(at: temporaryRoot)
        }
    }

    // MARK: - Receiving

    /// Takes a buffer for a message whose first part arrived (a serial packet's first line, a
    /// BLE write that starts a frame), as Zephyr's serial and Bluetooth transports do.
    /// - Returns: the buffer, or `nil` when the pool is empty or the device is not running: the
    ///   message is then lost.
    public func reserveBuffer() -> ReceiveBuffer? {
        guard isAnswering else { return nil }
        guard pool.take() else {
            requestsDroppedForBuffers += 1
            logger.debug("no free buffer: request dropped", metadata: ["held": "\(pool.held)"])
            return nil
        }
        return ReceiveBuffer(boot: boot)
    }

    /// Gives back a buffer whose message was abandoned (bad CRC, a partial frame timed out).
    /// - Parameter buffer: the buffer.
    public func releaseBuffer(_ buffer: ReceiveBuffer) {
        if buffer.boot == boot { pool.give() }
    }

    /// Queues a received message in the buffer taken for it; `transmit` sends its answers.
    /// - Parameters:
    ///   - message: the message (one or more SMP frames, each 4-byte aligned).
    ///   - buffer: the buffer from ``reserveBuffer()``; a buffer from before a reboot is void and
    ///     the message is lost.
    ///   - release: when the request's and its answers' buffers are free again.
    ///   - transmit: sends the answers; called once, unless the device reboots first.
    public func receive(
        _ message: [UInt8],
        in buffer: ReceiveBuffer,
        release: BufferRelease = .onHandOff,
        transmit: @escaping Transmit
    ) {
        guard buffer.boot == boot, isAnswering else { return }
        enqueue(Queued(message: message, buffer: buffer, release: release, reply: .link(transmit)))
    }

    /// Takes a buffer for a whole message and queues it, as Zephyr's UDP transport does with a
    /// datagram.
    /// - Parameters:
    ///   - message: the message.
    ///   - transmit: sends the answers.
    /// - Returns: `false` when the message was lost (no free buffer, the device not running).
    @discardableResult
    public func receive(_ message: [UInt8], transmit: @escaping Transmit) -> Bool {
        guard let buffer = reserveBuffer() else { return false }
        receive(message, in: buffer, transmit: transmit)
        return true
    }

    /// Handles one message with the device's semantics only and returns its answers: zero when
    /// Zephyr would drop it (bad framing, a response, a frame larger than the buffer, power lost,
    /// device off). In arrival order with everything else, but without the buffer pool and
    /// without link faults or latency — for tests of what a handler answers.
    ///
    /// Device faults apply (``Fault/busy(count:)``, ``Fault/dropRequests(every:)``,
    /// ``Fault/powerLoss(_:)``).
    /// - Parameter frame: the message bytes.
    /// - Returns: the responses, in order.
    public func handle(_ frame: [UInt8]) async -> [[UInt8]] {
        await withCheckedContinuation { continuation in
            enqueue(Queued(message: frame, buffer: nil, reply: .direct(continuation)))
        }
    }

    /// Whether the application's SMP server is up (not rebooting, something bootable ran).
    private var isAnswering: Bool {
        if let offlineUntil {
            if configuration.clock.elapsed() < offlineUntil { return false }
            self.offlineUntil = nil
        }
        return core.isAnswering
    }

    // MARK: - The SMP work queue

    private func enqueue(_ item: Queued) {
        configuration.quietClock?.hold()
        queue.append(item)
        guard !working else { return }
        working = true
        Task { [weak self] in await self?.work() }
    }

    private func work() async {
        while !queue.isEmpty {
            let item = queue.removeFirst()
            // Taken in hand at `enqueue`; done at the end of this pass, whichever way it ends.
            defer { configuration.quietClock?.release() }
            let generation = boot
            // Requests that arrive meanwhile wait in their buffers: this is when a burst fills
            // the pool.
            let processing = configuration.requestProcessingTime
            if processing > .zero { try? await configuration.clock.sleep(processing) }
            guard generation == boot else {
                finish(item, with: [])
                continue
            }
            let outcome = process(item.message, pooled: item.buffer != nil)
            if outcome.powerLost {
                // No answer; a link that notices a rebooting device (BLE) is told.
                if case .link(let transmit) = item.reply {
                    await transmit(LinkDelivery(responses: [], disconnect: false, deviceResets: true))
                }
                finish(item, with: [])
                continue
            }
            if outcome.flashTime > .zero { try? await configuration.clock.sleep(outcome.flashTime) }
            guard generation == boot else {
                finish(item, with: [])
                continue
            }
            let buffers = outcome.responseBuffers + (item.buffer == nil ? 0 : 1)
            if item.release == .onHandOff { pool.give(buffers) }
            // Zephyr schedules the reboot in the handler, before the answer goes out: whoever
            // reads the answer finds the reboot already on its way.
            if outcome.reset { scheduleReboot() }
            switch item.reply {
            case .direct(let continuation):
                continuation.resume(returning: outcome.responses)
            case .link(let transmit):
                var delivery = injector.deliver(
                    outcome.responses,
                    latency: configuration.linkLatency,
                    wasReset: outcome.reset
                )
                delivery.deviceResets = outcome.reset || outcome.powerLost
                await transmit(delivery)
            }
            if item.release == .afterTransmit && generation == boot { pool.give(buffers) }
            if outcome.reset && configuration.resetDelay == .zero && generation == boot { reboot() }
        }
        working = false
    }

    /// Ends a queued item that will not be answered.
    private func finish(_ item: Queued, with responses: [[UInt8]]) {
        if case .direct(let continuation) = item.reply { continuation.resume(returning: responses) }
    }

    private struct Outcome {
        var responses: [[UInt8]] = []
        var responseBuffers = 0
        var flashTime: Duration = .zero
        var reset = false
        var powerLost = false
    }

    private func process(_ frame: [UInt8], pooled: Bool) -> Outcome {
        guard isAnswering else { return Outcome() }
        switch injector.admit() {
        case .drop:
            logger.debug("fault: request dropped")
            return Outcome()
        case .busy:
            return Outcome(responses: core.busyResponse(to: frame).map { [$0] } ?? [])
        case .powerLoss:
            logger.debug("fault: power lost while handling a request")
            reboot(powerCycle: true)
            return Outcome(powerLost: true)
        case .reset:
            logger.debug("fault: the device reset while handling a request")
            reboot()
            return Outcome(powerLost: true)
        case .process:
            break
        }
        core.uploadPowerLossOffset = injector.powerLossUploadOffset
        core.flashCorruptionOffset = injector.flashCorruptionOffset
        core.uploadRefusal = injector.uploadRefusal
        let bootloaderBefore = core.bootloader.slots
        let settingsBefore = core.settings.saved
        // Serial recovery answers from a buffer of its own, not from the pool.
        let answerBuffers = pooled && core.bootloader.stage != .serialRecovery ? pool.free : Int.max
        let result = core.process(frame, responseBuffers: answerBuffers)
        if pooled {
            pool.take(result.buffersUsed)
            if result.ranOutOfBuffers {
                requestsRefusedForBuffers += 1
                logger.debug("no free buffer for the answer: ENOMEM", metadata: ["held": "\(pool.held)"])
            }
        }
        let effects = result.effects
        if effects.powerLoss {
            injector.consumeUploadPowerLoss()
            logger.debug("fault: power lost during upload")
            reboot(powerCycle: true)
            return Outcome(powerLost: true)
        }
        if effects.flashCorrupted {
            injector.consumeFlashCorruption()
            logger.debug("fault: a flash write stored a flipped bit")
        }
        if let store, !effects.reset {
            if core.upload == nil && core.bootloader.slots != bootloaderBefore { store.saveFlash(core.bootloader) }
            if core.settings.saved != settingsBefore { store.saveSettings(core.settings.saved) }
        }
        return Outcome(
            responses: result.responses,
            responseBuffers: pooled ? result.buffersUsed : 0,
            flashTime: effects.flashTime,
            reset: effects.reset
        )
    }

    // MARK: - Power

    /// Resets the device now, as a power cycle or the reset button does: RAM state (the
    /// retention boot mode with it) is lost, MCUboot runs its decision, and the device answers
    /// again after ``Configuration/bootTime``.
    /// - Parameter holdingRecoveryButton: hold the recovery button while it boots: MCUboot enters
    ///   serial recovery (or the firmware loader) before anything else — the way back for a
    ///   device whose application is broken.
    public func reset(holdingRecoveryButton: Bool = false) {
        reboot(powerCycle: true, button: holdingRecoveryButton)
    }

    /// After answering `os reset`: run on for the reset delay, then reboot.
    private func scheduleReboot() {
        // Without a delay the work queue reboots the device once the answer is out.
        guard pendingReboot == nil, configuration.resetDelay > .zero else { return }
        let generation = boot
        let delay = configuration.resetDelay
        let clock = configuration.clock
        // Weak: a device dropped meanwhile need not live until its reboot.
        pendingReboot = Task { [weak self] in
            if delay > .zero { try? await clock.sleep(delay) }
            await self?.reboot(ifStill: generation)
        }
    }

    private func reboot(ifStill generation: Int) {
        guard generation == boot else { return }
        reboot()
    }

    private func reboot(powerCycle: Bool = false, button: Bool = false) {
        pendingReboot?.cancel()
        pendingReboot = nil
        boot += 1
        let lost = queue
        queue.removeAll()
        for item in lost {
            finish(item, with: [])
            configuration.quietClock?.release()
        }
        var moved = core.reboot(interruptingSwap: injector.powerLossSwapStep, powerCycle: powerCycle, button: button)
        if core.bootloader.lastBootInterrupted {
            // Power comes back: MCUboot resumes the swap from its status area.
            injector.consumeSwapPowerLoss()
            logger.debug("fault: power lost during swap; resuming at the next boot")
            moved += core.reboot(interruptingSwap: nil, powerCycle: true, button: button)
        }
        pool = Self.pool(for: core.bootloader.stage, configuration)
        if core.bootloader.lastSwapSteps > 0 { lastSwapSteps = core.bootloader.lastSwapSteps }
        for line in core.bootloader.lastBootLog { logger.debug("boot: \(line)") }
        var offline = configuration.bootTime
        if let rate = configuration.swapBytesPerSecond, rate > 0, moved > 0 {
            offline += .milliseconds(Int64(Double(moved) / rate * 1000))
        }
        offlineUntil = offline > .zero ? configuration.clock.elapsed() + offline : nil
        if let store {
            store.saveFlash(core.bootloader)
            store.saveSettings(core.settings.saved)
        }
    }

    /// Waits until a reboot the device announced (an answered `os reset`) has happened and the
    /// device answers again — what a person watching the device would wait for before the next
    /// command.
    public func waitUntilAnswering() async {
        if let pendingReboot { await pendingReboot.value }
        if let offlineUntil {
            let left = offlineUntil - configuration.clock.elapsed()
            if left > .zero { try? await configuration.clock.sleep(left) }
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

    /// The flash steps (sector copies, trailer writes) of the last boot that swapped or copied
    /// anything, resumed swaps included: the moments ``PowerLossMoment/duringSwapStep(_:)`` can
    /// name.
    public private(set) var lastSwapSteps = 0

    /// How many times the device has booted (1 after creation).
    public var bootCount: Int { core.bootCount }

    /// Whether the application (or the firmware loader) runs: false in serial recovery and when
    /// MCUboot found nothing bootable.
    public var isRunning: Bool { core.bootloader.isRunning }

    /// What runs: the application, the firmware loader, serial recovery, or nothing.
    public var stage: BootStage { core.bootloader.stage }

    /// Whether the device can be brought back without a debugger: something answers, or holding
    /// the recovery button at a reset would start serial recovery or a valid firmware loader.
    public var isRecoverable: Bool {
        if core.isAnswering { return true }
        var probe = core.bootloader
        probe.boot(request: .button)
        return probe.stage != .halted
    }

    /// What a reset now would do, tried on a copy of the device — nothing changes: MCUboot's
    /// decision in the words of its log, and what would run. It is the device's own boot code
    /// run ahead, so a page or a test shows what the next boot does rather than guessing it from
    /// the flags. A retained boot mode counts, as at an `os reset`; an interrupted swap resumes.
    public var nextBoot: BootPreview {
        var probe = core
        _ = probe.reboot(interruptingSwap: nil)
        return BootPreview(
            log: probe.bootloader.lastBootLog,
            stage: probe.bootloader.stage,
            running: probe.bootloader.isRunning ? probe.bootloader.stateList().filter(\.isActive) : []
        )
    }

    /// What the next boot would do (``nextBoot``).
    public struct BootPreview: Sendable, Hashable {
        /// MCUboot's decisions, one line each (`image 0: test swap`, `application`).
        public var log: [String]
        /// What would run.
        public var stage: BootStage
        /// The slots that would run, one per image (none unless an application or loader runs).
        public var running: [ImageManagement.SlotState]
    }

    /// The receive buffer of whatever runs, and on a console UART the longest line it keeps:
    /// the serial server shapes its decoder with it after every boot.
    public var receiveLimits: ReceiveLimits {
        if core.bootloader.stage == .serialRecovery, let recovery = configuration.serialRecovery {
            return ReceiveLimits(
                boot: boot,
                bufferSize: recovery.receiveBufferSize,
                lineLength: recovery.maximumLineLength,
                lineBuffers: recovery.lineBuffers
            )
        }
        return ReceiveLimits(boot: boot, bufferSize: configuration.bufferSize, lineLength: nil, lineBuffers: nil)
    }

    /// What the device's receiver takes at the moment.
    public struct ReceiveLimits: Sendable, Hashable {
        /// Changes at every boot.
        public var boot: Int
        /// The receive buffer: a console packet (length, message, CRC) or a raw message.
        public var bufferSize: Int
        /// The longest console line (marker and newline included), if limited.
        public var lineLength: Int?
        /// Console lines that can wait while the device handles a message (MCUboot's serial
        /// recovery reads one message at a time); `nil` for Zephyr's transport, which takes a
        /// pool buffer per packet instead.
        public var lineBuffers: Int?
    }

    /// The upload session in progress, if any.
    public var uploadSession: ImageUploadSession? { core.upload }

    /// The settings in effect.
    public var settings: [String: [UInt8]] { core.settings.runtime }

    /// The host folder holding `/lfs1`.
    public var fileSystemRoot: URL { core.files.root }

    /// The boot mode the last reset asked for (`boot_mode`), if any.
    public var lastBootMode: UInt8? { core.lastBootMode }

    /// Buffers of the pool held now (requests waiting or in work, answers being sent).
    public var buffersHeld: Int { pool.held }

    /// Requests the device handled since it was made (across reboots): the indexes that the
    /// request-counted faults (`.powerLoss(.atRequest:)`, `.loseAnswer`, `.linkLoss`) refer to,
    /// when no other fault drops requests.
    public var requestsHandled: Int { core.requestCount }

    /// How many times the device handled requests of a type since it was made (across reboots):
    /// a request dropped, refused for buffers or lost to a reboot does not count.
    /// - Parameter request: the request type.
    public var counters: Counters {
        var counters = core.counters
        counters.resets = timesHandled(OSManagement.Reset.self)
        counters.boots = core.bootCount
        counters.requests = core.requestCount
        return counters
    }

    /// What a device received since it was made (across reboots), for proving what a client did:
    /// how many uploads started from scratch (a resumed upload is not one), how many image bytes
    /// arrived and were written, how many resets it handled.
    public struct Counters: Sendable, Hashable, Codable {
        /// Image uploads begun at offset 0 with a new session (the slot erased): a resumed
        /// upload does not count.
        public var uploadsStarted = 0
        /// Image bytes that reached the upload handler: every chunk the device processed, written
        /// or answered with its offset (a chunk dropped or refused for want of a buffer never
        /// reaches it).
        public var imageBytesReceived = 0
        /// Image bytes written to flash (a chunk at the wrong offset is not written; an upload
        /// started over writes its bytes again).
        public var imageBytesWritten = 0
        /// `os reset` requests handled.
        public var resets = 0
        /// Boots, the first one included.
        public var boots = 0
        /// Requests handled.
        public var requests = 0

        /// No counts.
        public init() {}

        enum CodingKeys: String, CodingKey {
            case uploadsStarted = "uploads_started"
            case imageBytesReceived = "image_bytes_received"
            case imageBytesWritten = "image_bytes_written"
            case resets, boots, requests
        }
    }

    /// How many times the device handled requests of a type since it was made (across reboots):
    /// a request dropped, refused for buffers or lost to a reboot does not count.
    /// - Parameter request: the request type.
    public func timesHandled<Request: SMPRequest>(_ request: Request.Type) -> Int {
        core.handledCommands[SMPCommandID(group: Request.group, command: Request.command, operation: Request.operation)]
            ?? 0
    }
}
