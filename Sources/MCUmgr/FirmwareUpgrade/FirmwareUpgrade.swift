import Foundation
import Logging
import MCUboot
import SMPCore

/// Upgrades a device's firmware: plans from the device's slots, uploads, tests or confirms,
/// resets, reconnects, and verifies the outcome.
///
/// ```swift
/// let package = try FirmwarePackage(contentsOf: url)
/// let upgrade = FirmwareUpgrade(transport: transport, configuration: .init(mode: .testAndConfirm))
/// for try await event in upgrade.run(package) {
///     if case .uploadProgress(let progress) = event { print(progress.fraction) }
/// }
/// ```
///
/// The decisions live in ``FirmwareUpgradePlanner`` and ``FirmwareUpgradeStateMachine``; this
/// type only performs their actions. It owns its connections: after a reset it connects again
/// through the transport (a client passed in is closed at the first reset).
///
/// ``pause()`` holds the upgrade at the next command (an upload stops after the chunk in flight
/// and resumes from the device's offset); ``resume()`` continues; ``cancel()`` and cancelling
/// the consuming task end it with ``FirmwareUpgradeError/Code/cancelled`` in every state.
public final class FirmwareUpgrade: Sendable {
    /// The upgrade's configuration.
    public let configuration: Configuration
    /// How to reach the device (again after each reset).
    public let transport: any SMPTransport
    /// The configuration of every client the upgrade opens.
    public let clientConfiguration: SMPClient.Configuration
    private let initialClient: SMPClient?
    private let logger: Logger
    private let control = Control()

    /// Creates an upgrade.
    /// - Parameters:
    ///   - transport: how to reach the device.
    ///   - configuration: mode, window, timeouts, retries.
    ///   - clientConfiguration: request timeout and retries of the clients it opens.
    ///   - client: an already connected client to start with (optional).
    ///   - logger: where decisions are logged.
    public init(
        transport: any SMPTransport,
        configuration: Configuration = .init(),
        clientConfiguration: SMPClient.Configuration = .init(),
        client: SMPClient? = nil,
        logger: Logger? = nil
    ) {
        self.transport = transport
        self.configuration = configuration
        self.clientConfiguration = clientConfiguration
        self.initialClient = client
        self.logger = logger ?? Logger(label: "mcumgr.upgrade")
    }

    // MARK: - Control

    /// Holds the upgrade at the next command, or after the upload chunk in flight.
    public func pause() { control.setPaused(true) }

    /// Continues a paused upgrade.
    public func resume() { control.setPaused(false) }

    /// Ends the upgrade with ``FirmwareUpgradeError/Code/cancelled``.
    public func cancel() { control.cancel() }

    /// Whether the caller paused the upgrade.
    public var isPaused: Bool { control.isPaused }

    // MARK: - Running

    /// Runs the upgrade of a package.
    /// - Parameter package: MCUboot images (`.bin`, `.zip`) or a SUIT package.
    /// - Returns: the events; the sequence finishes after ``Event/completed(_:)``, or throws a
    ///   ``FirmwareUpgradeError`` carrying the state it failed in.
    public func run(_ package: FirmwarePackage) -> AsyncThrowingStream<Event, any Error> {
        let images = package.isSUIT ? package.images : package.images.filter { $0.content == .mcuboot }
        return start(images: images, package: package, resources: [:])
    }

    /// Runs the upgrade of images: MCUboot images, or a SUIT envelope and its caches.
    /// - Parameters:
    ///   - images: the images, with their image numbers and target slots.
    ///   - resources: files a SUIT device may ask for, by name (`app.bin` for `file://app.bin`).
    /// - Returns: the events, as ``run(_:)``.
    public func run(images: [FirmwarePackage.Image], resources: [String: Data] = [:])
        -> AsyncThrowingStream<Event, any Error>
    {
        start(images: images, package: nil, resources: resources)
    }

    private func start(images: [FirmwarePackage.Image], package: FirmwarePackage?, resources: [String: Data])
        -> AsyncThrowingStream<Event, any Error>
    {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: Event.self, throwing: (any Error).self)
        control.beginRun()
        let task = Task {
            var driver = Driver(
                upgrade: self,
                images: images,
                package: package,
                resources: resources,
                continuation: continuation
            )
            await driver.run()
        }
        control.setTask(task)
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    // MARK: - Driver

    /// Performs the state machine's actions; one per run.
    private struct Driver {
        let upgrade: FirmwareUpgrade
        let images: [FirmwarePackage.Image]
        let package: FirmwarePackage?
        let resources: [String: Data]
        let continuation: AsyncThrowingStream<Event, any Error>.Continuation
        var machine: FirmwareUpgradeStateMachine
        var client: SMPClient?
        var reportedState: State = .idle
        var reportedPlan: FirmwareUpgradePlan?
        var uploadedBytes = 0
        let started = ContinuousClock.now

        init(
            upgrade: FirmwareUpgrade,
            images: [FirmwarePackage.Image],
            package: FirmwarePackage?,
            resources: [String: Data],
            continuation: AsyncThrowingStream<Event, any Error>.Continuation
        ) {
            self.upgrade = upgrade
            self.images = images
            self.package = package
            self.resources = resources
            self.continuation = continuation
            self.client = upgrade.initialClient
            let isSUIT = package?.isSUIT ?? images.contains { $0.content == .suitEnvelope }
            machine = FirmwareUpgradeStateMachine(configuration: upgrade.configuration, images: images, isSUIT: isSUIT)
        }

        var configuration: Configuration { upgrade.configuration }
        var logger: Logger { upgrade.logger }

        func emit(_ event: Event) { continuation.yield(event) }

        mutating func report() {
            if machine.state != reportedState {
                emit(.stateChanged(from: reportedState, to: machine.state))
                logger.debug("upgrade state", metadata: ["from": "\(reportedState)", "to": "\(machine.state)"])
                reportedState = machine.state
            }
            if let plan = machine.plan, plan != reportedPlan {
                reportedPlan = plan
                for warning in plan.warnings { emit(.warning(warning)) }
                emit(.planned(plan))
            }
        }

        mutating func run() async {
            var action = machine.handle(.start)
            while true {
                report()
                if Task.isCancelled || upgrade.control.isCancelled {
                    if case .fail = action {} else { action = machine.handle(.cancel) }
                } else if upgrade.control.isPaused && !machine.isPaused && !action.isTerminal {
                    action = machine.handle(.pause)
                    report()
                    emit(.paused(machine.state))
                }
                switch action {
                case .succeed:
                    await finishSuccessfully()
                    return
                case .fail(let error):
                    report()
                    logger.debug("upgrade failed", metadata: ["error": "\(error)"])
                    await closeClient()
                    continuation.finish(throwing: error)
                    return
                case .waitForResume:
                    await upgrade.control.waitUntilResumed()
                    if Task.isCancelled || upgrade.control.isCancelled { continue }
                    emit(.resumed(machine.state))
                    action = machine.handle(.resume)
                case .readParameters:
                    action = await readParameters()
                case .readBootloaderInfo:
                    action = await readBootloaderInfo()
                case .readImageList:
                    do {
                        let list = try await connectedClient().send(ImageManagement.StateRead()).images
                        action = machine.handle(.imageList(list))
                    } catch {
                        action = machine.handle(classify(error))
                    }
                case .perform(let step):
                    do {
                        let slots = try await perform(step)
                        action = machine.handle(.stepCompleted(slots: slots))
                    } catch is UploadPaused {
                        action = machine.handle(.pause)
                        report()
                        emit(.paused(machine.state))
                    } catch {
                        action = machine.handle(classify(error))
                    }
                case .waitForSwap(let duration):
                    await closeClient()
                    if duration > .zero { try? await Task.sleep(for: duration) }
                    action = machine.handle(.swapWaitOver)
                case .reconnect:
                    await closeClient()
                    do {
                        let attempts = try await reconnect()
                        emit(.reconnected(attempts: attempts))
                        action = machine.handle(.reconnected)
                    } catch {
                        action = machine.handle(error is CancellationError ? .cancel : .linkFailed(SendableBox(error)))
                    }
                }
            }
        }

        mutating func finishSuccessfully() async {
            report()
            var after: [ImageManagement.SlotState] = []
            if !machine.isSUIT, let client {
                after = (try? await client.send(ImageManagement.StateRead()).images) ?? []
            }
            let summary = Summary(
                plan: machine.plan,
                before: machine.initialSlots ?? [],
                after: after,
                bootloaderName: machine.bootloaderName,
                bootloaderMode: machine.bootloaderMode,
                uploadedBytes: uploadedBytes,
                duration: ContinuousClock.now - started,
                isUpToDate: machine.plan?.isUpToDate ?? false
            )
            await closeClient()
            emit(.completed(summary))
            continuation.finish()
        }

        mutating func closeClient() async {
            guard let client else { return }
            self.client = nil
            await client.close()
        }

        mutating func connectedClient() async throws -> SMPClient {
            if let client { return client }
            let client = try await SMPClient.connect(
                upgrade.transport,
                configuration: upgrade.clientConfiguration,
                logger: logger
            )
            self.client = client
            return client
        }

        func classify(_ error: any Error) -> FirmwareUpgradeStateMachine.Input {
            switch error {
            case is CancellationError: .cancel
            case let refusal as SMPDeviceError: .deviceRefused(refusal)
            case let failure as FirmwareUpgradeError: .failed(failure.code, failure.message)
            case let link as SMPTransportError: .linkFailed(link)
            case let malformed as SMPError: .linkFailed(malformed)
            default: .linkFailed(SendableBox(error))
            }
        }

        // MARK: Probes

        mutating func readParameters() async -> FirmwareUpgradeStateMachine.Action {
            do {
                let client = try await connectedClient()
                _ = try await client.loadParameters()
                return machine.handle(.parametersRead)
            } catch is CancellationError {
                return machine.handle(.cancel)
            } catch {
                return machine.handle(
                    .failed(.linkFailed, "cannot connect to \(upgrade.transport.endpointDescription): \(error)")
                )
            }
        }

        mutating func readBootloaderInfo() async -> FirmwareUpgradeStateMachine.Action {
            let timeout = configuration.probeTimeout
            var name: String?
            var mode: OSManagement.MCUbootMode?
            do {
                let client = try await connectedClient()
                do {
                    name = try await client.send(OSManagement.BootloaderInfo(), timeout: timeout, retries: 1).bootloader
                } catch is CancellationError {
                    return machine.handle(.cancel)
                } catch {
                    emit(.warning("the device did not answer bootloader info (\(error)); assuming MCUboot"))
                }
                if name == nil || name?.lowercased() == "mcuboot" {
                    do {
                        mode = try await client.send(
                            OSManagement.BootloaderInfo(query: "mode"),
                            timeout: timeout,
                            retries: 1
                        ).mode
                    } catch is CancellationError {
                        return machine.handle(.cancel)
                    } catch {
                        logger.debug("no bootloader mode", metadata: ["error": "\(error)"])
                    }
                }
            } catch {
                return machine.handle(classify(error))
            }
            logger.debug("bootloader", metadata: ["name": "\(name ?? "?")", "mode": "\(mode.map { "\($0)" } ?? "?")"])
            return machine.handle(.bootloaderInfo(name: name, mode: mode))
        }

        // MARK: Steps

        mutating func perform(_ step: FirmwareUpgradePlan.Step) async throws -> [ImageManagement.SlotState]? {
            let client = try await connectedClient()
            switch step {
            case .upload(let imageIndex, let packageIndex):
                let data = images[packageIndex].data
                let sha = ImageHashAlgorithm.sha256.hash(data)
                try await upload(
                    ImageUpload(data: data, image: imageIndex, sha256: Data(sha)),
                    image: imageIndex,
                    client: client
                )
                return nil
            case .eraseAppSettings:
                do {
                    _ = try await client.send(ZephyrBasicManagement.EraseStorage())
                } catch let refusal as SMPDeviceError {
                    emit(.warning("the device did not erase its settings storage: \(refusal)"))
                }
                return nil
            case .test(let hash):
                return try await client.send(ImageManagement.StateWrite(hash: Data(hash), confirm: false)).images
            case .confirm(let hash):
                return try await client.send(ImageManagement.StateWrite(hash: Data(hash), confirm: true)).images
            case .reset, .resetBeforeUpload:
                // Never re-sent by the client: a second reset could revert a test swap.
                do {
                    _ = try await client.send(OSManagement.Reset(), retries: 0)
                } catch let refusal as SMPDeviceError where refusal.returnCode == .busy {
                    emit(.warning("the device refused the reset as busy; forcing it"))
                    _ = try await client.send(OSManagement.Reset(force: true), retries: 0)
                }
                return nil
            case .verify:
                return try await client.send(ImageManagement.StateRead()).images
            case .suitUploadEnvelope(let packageIndex, let deferInstall):
                let image = images[packageIndex]
                try await upload(
                    SUITEnvelopeUpload(data: image.data, deferInstall: deferInstall),
                    image: image.imageIndex,
                    client: client
                )
                return nil
            case .suitUploadCache(let packageIndex):
                let image = images[packageIndex]
                try await upload(
                    SUITCacheUpload(data: image.data, targetID: UInt32(clamping: image.imageIndex)),
                    image: image.imageIndex,
                    client: client
                )
                return nil
            case .suitProcess:
                _ = try await client.send(SUITManagement.EnvelopeUpload.processDeferredEnvelope)
                return nil
            case .suitInstall(let digest):
                try await installSUIT(digest: digest, client: client)
                return nil
            }
        }

        /// Sizes of the images this plan uploads, and of those before the current one.
        func uploadTotals(for image: Int, size: Int) -> (before: Int, total: Int) {
            guard let plan = machine.plan else { return (0, size) }
            var before = 0
            var total = 0
            var passed = false
            for step in plan.steps {
                let bytes: Int
                switch step {
                case .upload(_, let index), .suitUploadEnvelope(let index, _), .suitUploadCache(let index):
                    bytes = images[index].data.count
                default: continue
                }
                if step == machine.currentStep { passed = true }
                if !passed { before += bytes }
                total += bytes
            }
            return (before, total)
        }

        mutating func upload<U: ChunkedUpload>(_ upload: U, image: Int, client: SMPClient) async throws {
            let options = TransferOptions(
                window: configuration.window,
                alignment: max(1, configuration.byteAlignment),
                firstChunkTimeout: configuration.firstChunkTimeout,
                maximumFrameSize: configuration.reassemblyBufferSize
            )
            let (before, total) = uploadTotals(for: image, size: upload.data.count)
            var startOffset = 0
            var confirmed = 0
            defer { uploadedBytes += max(0, confirmed - startOffset) }
            for try await event in client.upload(upload, options: options) {
                let progress: TransferProgress
                switch event {
                case .progress(let value): progress = value
                case .resumed(let offset):
                    startOffset = offset
                    emit(.uploadResumed(image: image, offset: offset))
                    continue
                case .windowChanged, .restarted: continue
                }
                confirmed = progress.bytesConfirmed
                let done = before + progress.bytesConfirmed
                let rate = progress.bytesPerSecond
                emit(
                    .uploadProgress(
                        UploadProgress(
                            image: image,
                            imageBytesConfirmed: progress.bytesConfirmed,
                            imageBytes: progress.totalBytes,
                            totalBytesConfirmed: done,
                            totalBytes: total,
                            bytesPerSecond: rate,
                            estimatedTimeRemaining: rate > 0 ? .seconds(Double(total - done) / rate) : nil
                        )
                    )
                )
                if upgrade.control.isPaused && progress.bytesConfirmed < progress.totalBytes { throw UploadPaused() }
            }
        }

        func installSUIT(digest: [UInt8], client: SMPClient) async throws {
            let deadline = ContinuousClock.now + configuration.suitInstallTimeout
            while ContinuousClock.now < deadline {
                try Task.checkCancellation()
                let request = try await client.send(SUITManagement.MissingImageState())
                if let session = request.streamSessionID, let uri = request.resourceURI {
                    guard let data = resource(named: uri) else {
                        throw FirmwareUpgradeError(
                            .resourceNotFound,
                            state: .installing,
                            "the device asked for \(uri), which the package does not hold"
                        )
                    }
                    emit(.warning("the device asked for \(uri); sending \(data.count) bytes"))
                    for try await _ in client.upload(
                        SUITResourceUpload(data: data, streamSessionID: session),
                        options: TransferOptions(window: configuration.window)
                    ) {}
                    continue
                }
                if try await installedDigests(client: client).contains(digest) { return }
                try await Task.sleep(for: configuration.suitPollInterval)
            }
            throw FirmwareUpgradeError(
                .suitNotInstalled,
                state: .installing,
                "the device did not install the envelope within \(configuration.suitInstallTimeout)"
            )
        }

        func resource(named uri: String) -> Data? {
            if let found = package?.resource(named: uri) { return found.data }
            let bare = uri.hasPrefix("file://") ? String(uri.dropFirst(7)) : uri
            return resources.first { $0.key.lowercased() == bare.lowercased() }?.value
        }

        func installedDigests(client: SMPClient) async throws -> [[UInt8]] {
            let roles = try await client.send(SUITManagement.ManifestList()).manifests.map(\.role)
            var digests: [[UInt8]] = []
            for role in roles {
                if let digest = try? await client.send(SUITManagement.ManifestState(role: role)).digest {
                    digests.append(Array(digest))
                }
            }
            return digests
        }

        // MARK: Reconnecting

        /// Connects until the device answers an image list, or the deadline passes.
        mutating func reconnect() async throws -> Int {
            let deadline = ContinuousClock.now + configuration.reconnectTimeout
            var attempts = 0
            var lastError: any Error = SMPTransportError(.timeout, "no attempt")
            repeat {
                try Task.checkCancellation()
                attempts += 1
                do {
                    let candidate = try await SMPClient.connect(
                        upgrade.transport,
                        configuration: upgrade.clientConfiguration,
                        logger: logger
                    )
                    do {
                        _ = try await candidate.send(ImageManagement.StateRead(), retries: 0)
                        _ = try await candidate.loadParameters()
                        client = candidate
                        logger.debug("reconnected", metadata: ["attempts": "\(attempts)"])
                        return attempts
                    } catch {
                        await candidate.close()
                        throw error
                    }
                } catch is CancellationError {
                    throw CancellationError()
                } catch {
                    lastError = error
                    logger.debug("reconnect attempt failed", metadata: ["attempt": "\(attempts)", "error": "\(error)"])
                }
                try await Task.sleep(for: configuration.reconnectInterval)
            } while ContinuousClock.now < deadline
            throw lastError
        }
    }
}

extension FirmwareUpgradeStateMachine.Action {
    var isTerminal: Bool {
        switch self {
        case .succeed, .fail: true
        default: false
        }
    }
}

/// Thrown inside the driver when a pause stops an upload.
private struct UploadPaused: Error {}

/// Wraps an error that is not known to be `Sendable`, keeping its description.
struct SendableBox: Error, Sendable, CustomStringConvertible {
    let description: String
    init(_ error: any Error) { description = "\(error)" }
}

/// Pause, resume and cancel, shared between the caller and the driver.
private final class Control: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var paused = false
    private var cancelled = false
    private var waiters: [CheckedContinuation<Void, Never>] = []
    private var task: Task<Void, Never>?

    var isPaused: Bool { lock.withLock { paused } }
    var isCancelled: Bool { lock.withLock { cancelled } }

    func setPaused(_ value: Bool) {
        let resumed: [CheckedContinuation<Void, Never>] = lock.withLock {
            paused = value
            guard !value else { return [] }
            defer { waiters.removeAll() }
            return waiters
        }
        for waiter in resumed { waiter.resume() }
    }

    func setTask(_ task: Task<Void, Never>) { lock.withLock { self.task = task } }

    /// A new run: an earlier cancel no longer applies.
    func beginRun() { lock.withLock { cancelled = false } }

    func cancel() {
        let (task, resumed): (Task<Void, Never>?, [CheckedContinuation<Void, Never>]) = lock.withLock {
            cancelled = true
            defer { waiters.removeAll() }
            return (self.task, waiters)
        }
        for waiter in resumed { waiter.resume() }
        task?.cancel()
    }

    func waitUntilResumed() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = lock.withLock {
                    if !paused || cancelled || Task.isCancelled { return true }
                    waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let resumed = lock.withLock {
                defer { waiters.removeAll() }
                return waiters
            }
            for waiter in resumed { waiter.resume() }
        }
    }
}
