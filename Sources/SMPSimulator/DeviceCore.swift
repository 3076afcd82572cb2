import Foundation
import MCUboot
import SMPCBOR
import SMPCore

/// Everything the simulated device remembers, and the SMP server that works on it.
///
/// A value type with no I/O of its own except the file-system sandbox: the
/// ``SimulatedDevice`` actor owns one, feeds it frames and turns the ``Effects`` it reports
/// (flash time, resets) into waiting and booting.
struct DeviceCore {
    let configuration: SimulatedDevice.Configuration
    var bootloader: MCUbootModel
    var upload: ImageUploadSession?
    var settings: SettingsStore
    let files: FileSystemSandbox
    var fileTransfer: FileTransfer?
    var suit: SUITState
    var clockOffset: TimeInterval = 0
    var clockSet = true
    var bootCount = 1
    var requestCount = 0
    /// Requests handled per (group, command, operation): what tests of "sent once" count.
    var handledCommands: [SMPCommandID: Int] = [:]
    var lastBootMode: UInt8?
    /// The retention boot mode (`bootmode_set`): survives a reset, not a power loss; MCUboot
    /// reads it at the next boot and clears it when it acts on it.
    var retainedBootMode: UInt8?
    /// The upload MCUboot's serial recovery has in progress.
    var recoveryUpload: SerialRecoveryServer.Upload?
    var random: SeededRandom
    var uploadPowerLossOffset: Int?
    var flashCorruptionOffset: Int?
    /// An image-group code every image upload is refused with (a refusing device), if set.
    var uploadRefusal: Int?
    /// What the device received, across reboots: what a test reads to prove what a client did.
    var counters = SimulatedDevice.Counters()
    /// Mynewt's reboot log (with `mynewt_logs`): kept in storage, so across reboots.
    var rebootLog: [LogManagement.Show.Entry] = []
    /// The index the next log entry gets (a clear does not reset it, as in Mynewt).
    var nextLogIndex: UInt32 = 0

    /// The groups this device serves: Zephyr's, and Mynewt's log group with `mynewt_logs`.
    var servedGroups: [HandlerGroup] {
        configuration.mynewtLogs ? Self.handlerGroups + [LogHandler.group] : Self.handlerGroups
    }

    /// Side effects of handling one request, carried out by the actor.
    struct Effects {
        /// Simulated flash time to wait before answering.
        var flashTime: Duration = .zero
        /// Reset after answering.
        var reset = false
        /// Power was lost while handling the request.
        var powerLoss = false
        /// An injected flash corruption was written (the fault is used up).
        var flashCorrupted = false
    }

    /// An open file transfer (Zephyr keeps one file open between chunks).
    struct FileTransfer {
        enum Direction { case upload, download }
        var direction: Direction
        var path: String
        var url: URL
        var offset: Int
        var length: Int
    }

    init(configuration: SimulatedDevice.Configuration, filesRoot: URL, restored: MCUbootModel?, settings: SettingsStore)
    {
        self.configuration = configuration
        let version = ImageVersion(configuration.factoryVersion) ?? ImageVersion(major: 1, minor: 0, revision: 0)
        bootloader =
            restored
            ?? MCUbootModel(
                mode: configuration.bootloaderMode,
                imageCount: configuration.imageCount,
                slotSize: configuration.slotSize,
                factoryImages: (0..<configuration.imageCount).map { FactoryImage.make(version: version, image: $0) },
                signingKey: configuration.signingKey,
                downgradePrevention: configuration.downgradePrevention,
                recoveryEntry: configuration.recoveryEntry
            )
        if configuration.startsInRecovery {
            // Powered on with the recovery button held.
            bootloader.boot(request: .button)
        }
        self.settings = settings
        files = FileSystemSandbox(root: filesRoot)
        suit = SUITState()
        random = SeededRandom(seed: configuration.seed)
        logBoot(reason: "POWER_ON")
    }

    // MARK: - Frames

    /// What handling one message produced.
    struct ProcessResult {
        /// The response frames, in order.
        var responses: [[UInt8]] = []
        /// Side effects for the actor.
        var effects = Effects()
        /// Pool buffers the responses took (an `ENOMEM` answer reuses the request's buffer).
        var buffersUsed = 0
        /// A response found no free buffer: that request was answered `ENOMEM` unprocessed and
        /// the rest of the message dropped.
        var ranOutOfBuffers = false
    }

    /// Handles the bytes of one received message (one UDP datagram, one serial packet), as
    /// Zephyr's `smp_process_request_packet` does.
    /// - Parameters:
    ///   - bytes: the message.
    ///   - responseBuffers: pool buffers free for responses; each request's response takes one
    ///     before its handler runs, and without one the request is answered `{"rc": 2}` (ENOMEM)
    ///     in its own buffer and the rest of the message is dropped.
    /// - Returns: the responses (none when Zephyr would drop the message) and effects.
    mutating func process(_ bytes: [UInt8], responseBuffers: Int = .max) -> ProcessResult {
        // MCUboot's serial recovery is another server, with its own rules and answers.
        if bootloader.stage == .serialRecovery { return SerialRecoveryServer.process(bytes, device: &self) }
        var result = ProcessResult()
        // A message larger than a net buffer never reaches SMP.
        guard bytes.count <= configuration.bufferSize else { return result }
        var rest = bytes[...]
        // Zephyr processes several requests packed into one message, each 4-byte aligned.
        while rest.count >= SMPHeader.size {
            guard let header = try? SMPHeader(parsing: rest) else { break }
            let total = SMPHeader.size + Int(header.length)
            guard let operation = header.operation.response else { break }  // responses and undefined ops are dropped
            guard !bootloaderBlocksApplication else { break }
            guard total <= rest.count else {
                // The header announces more than arrived (a datagram cut at the UDP MTU): ECORRUPT.
                result.responses.append(
                    respond(
                        to: header,
                        operation: operation,
                        map: ResponseEncoding.failureMap(.management(.corruptPayload), legacy: true)
                    )
                )
                break
            }
            guard result.buffersUsed < responseBuffers else {
                result.ranOutOfBuffers = true
                result.responses.append(
                    respond(
                        to: header,
                        operation: operation,
                        map: ResponseEncoding.failureMap(.management(.noMemory), legacy: true)
                    )
                )
                break
            }
            result.buffersUsed += 1
            let frameBytes = Array(rest.prefix(total))
            rest = rest.dropFirst((total + 3) / 4 * 4)
            let outcome = handle(frameBytes, header: header, effects: &result.effects)
            switch outcome {
            case .success(var map):
                if configuration.legacyReturnCodes && map["rc"] == nil { map.put("rc", 0) }
                result.responses.append(
                    sized(respond(to: header, operation: operation, map: map), header: header, operation: operation)
                )
            case .failure(let failure):
                let map = ResponseEncoding.failureMap(failure, legacy: header.version == .v1)
                result.responses.append(respond(to: header, operation: operation, map: map))
            case .silence:
                result.responses = []
                return result
            }
            if result.effects.reset || result.effects.powerLoss { break }
        }
        return result
    }

    /// A device whose bootloader found nothing to boot answers nothing.
    var bootloaderBlocksApplication: Bool { !bootloader.isRunning }

    /// The answer to a request the fault injector marks busy.
    func busyResponse(to bytes: [UInt8]) -> [UInt8]? {
        guard let header = try? SMPHeader(parsing: bytes), let operation = header.operation.response else { return nil }
        return respond(
            to: header,
            operation: operation,
            map: ResponseEncoding.failureMap(.management(.busy), legacy: true)
        )
    }

    func respond(to header: SMPHeader, operation: SMPOperation, map: CBORMap) -> [UInt8] {
        var response = header
        response.operation = operation
        response.flags = 0
        let payload = ResponseEncoding.encode(map, indefinite: configuration.zcborIndefiniteMaps)
        response.length = UInt16(clamping: payload.count)
        return response.bytes + payload
    }

    /// A response that does not fit the device's buffer is replaced by `EMSGSIZE`.
    private func sized(_ frame: [UInt8], header: SMPHeader, operation: SMPOperation) -> [UInt8] {
        guard frame.count > configuration.bufferSize else { return frame }
        return respond(
            to: header,
            operation: operation,
            map: ResponseEncoding.failureMap(.management(.messageTooLarge), legacy: true)
        )
    }

    private mutating func handle(_ bytes: [UInt8], header: SMPHeader, effects: inout Effects) -> HandlerOutcome {
        requestCount += 1
        handledCommands[SMPCommandID(header), default: 0] += 1
        // SMP v1 and v2 only; anything newer is answered with rc 13.
        guard header.version.rawValue <= SMPVersion.v2.rawValue else {
            return .failure(.management(.protocolVersionTooNew))
        }
        guard let frame = try? SMPFrame(parsing: bytes) else { return .failure(.management(.corruptPayload)) }
        let request = SMPServerRequest(header: header, frame: frame)
        // An unknown group, command or operation is ENOTSUP, as Zephyr's empty table slots are.
        let id = SMPCommandID(header)
        guard let route = Self.routes[id] ?? (configuration.mynewtLogs ? LogHandler.routes[id] : nil) else {
            return .failure(.management(.notSupported))
        }
        do throws(HandlerFailure) {
            return .success(try route.handle(request, &self, &effects))
        } catch {
            if error == .powerLoss {
                effects.powerLoss = true
                return .silence
            }
            return .failure(error)
        }
    }

    // MARK: - Reset

    /// What a reset or power cycle does to RAM and flash.
    /// - Parameters:
    ///   - interruptingSwap: power is lost at this step of the boot's swaps and copies.
    ///   - powerCycle: power was lost (the retention boot mode with it), rather than a reset.
    ///   - button: the recovery button is held.
    /// - Returns: the bytes the bootloader swapped or copied.
    mutating func reboot(interruptingSwap: Int?, powerCycle: Bool = false, button: Bool = false) -> Int {
        upload = nil
        recoveryUpload = nil
        fileTransfer = nil
        settings.reload()
        suit.resetVolatile()
        bootCount += 1
        if powerCycle { retainedBootMode = nil }
        let request: BootRequest = button ? .button : retainedBootMode == 1 ? .bootMode : .normal
        let moved = bootloader.boot(interruptingSwap: interruptingSwap, request: request)
        logBoot(reason: button ? "PIN" : powerCycle ? "POWER_ON" : "SOFT")
        // MCUboot clears the boot mode when it acts on it, so the next reset boots normally.
        if request == .bootMode && bootloader.stage != .application { retainedBootMode = nil }
        return moved
    }

    /// Whether an SMP server answers: the application, the firmware loader or serial recovery.
    var isAnswering: Bool { bootloader.stage != .halted }

    /// The device clock.
    var now: Date { Date().addingTimeInterval(clockOffset) }
}

/// Settings as Zephyr keeps them: values set at run time, and those saved to storage.
struct SettingsStore: Sendable, Hashable {
    /// The values in effect.
    var runtime: [String: [UInt8]]
    /// The values in storage (survive a reset).
    var saved: [String: [UInt8]]

    init(saved: [String: [UInt8]] = [:]) {
        self.saved = saved
        runtime = saved
    }

    /// Reloads the runtime values from storage (what a boot does).
    mutating func reload() { runtime = saved }
}
