import Foundation
import Logging
import MCUboot
import MCUmgr
import SMPBytes
import SMPCore
import SMPLink

/// Upgrades a device's firmware: plans from the device's slots, uploads, tests or confirms,
/// resets once, reconnects, and verifies the outcome.
///
/// ```swift
/// let package = try FirmwarePackage(contentsOf: url)
/// let upgrade = FirmwareUpgrade(transport: transport, configuration: .init(mode: .testAndConfirm))
/// let run = upgrade.run(package)
/// for try await event in run {
///     if case .uploadProgress(let progress) = event { print(progress.fraction) }
/// }
/// ```
///
/// A value holding what every run needs; each ``run(_:onSlotsRead:)`` returns its own
/// ``FirmwareUpgradeRun`` (events, pause, resume, cancel), and concurrent runs share nothing.
/// The decisions live in a state machine; a run only performs its actions over connections it
/// opens through the transport (again after every reset).
public struct FirmwareUpgrade: Sendable {
    /// The upgrade's configuration.
    public let configuration: Configuration
    /// How to reach the device (again after each reset).
    public let transport: any SMPTransport
    /// The configuration of every client a run opens.
    public let clientConfiguration: SMPClient.Configuration
    let clock: SMPClock
    let logger: Logger

    /// Creates an upgrade.
    /// - Parameters:
    ///   - transport: how to reach the device.
    ///   - configuration: mode, window, timeouts, retries.
    ///   - clientConfiguration: request timeout and retries of the clients it opens.
    ///   - clock: the clock the run waits on and measures deadlines with (a test clock in tests).
    ///   - logger: where decisions are logged.
    public init<C: Clock<Duration>>(
        transport: any SMPTransport,
        configuration: Configuration = .init(),
        clientConfiguration: SMPClient.Configuration = .init(),
        clock: C = ContinuousClock(),
        logger: Logger? = nil
    ) {
        self.transport = transport
        self.configuration = configuration
        self.clientConfiguration = clientConfiguration
        self.clock = SMPClock(clock)
        self.logger = logger ?? Logger(label: "mcumgr.upgrade")
    }

    /// What a run hands its caller, and waits for, once it has read the device's slots: the
    /// slots as first read, before the run sends anything that could change the device. A fleet
    /// records there what each device ran before its upgrade, so that a kill during the upload
    /// cannot lose it (the ``Event/imagesRead(_:)`` event is not awaited: a busy reader can be an
    /// upload behind it).
    public typealias SlotsObserver = @Sendable ([ImageManagement.SlotState]) async -> Void

    /// Starts the upgrade of a package.
    /// - Parameters:
    ///   - package: MCUboot images (`.bin`, `.zip`) or a SUIT package.
    ///   - onSlotsRead: awaited once with the slots first read, before the next command (see
    ///     ``SlotsObserver``).
    /// - Returns: the run: its events finish after ``Event/completed(_:)``, or throw a
    ///   ``FirmwareUpgradeError`` carrying the state it failed in.
    public func run(_ package: FirmwarePackage, onSlotsRead: SlotsObserver? = nil) -> FirmwareUpgradeRun {
        guard package.isSUIT else {
            return start(.mcuboot(package.images.filter { $0.content == .mcuboot }), onSlotsRead)
        }
        var resources: [String: Data] = [:]
        for resource in package.resources { resources[resource.name] = resource.data }
        return start(.suit(images: package.images, resources: resources), onSlotsRead)
    }

    /// Starts the upgrade of images: MCUboot images, or a SUIT envelope and its caches.
    /// - Parameters:
    ///   - images: the images, with their image numbers and target slots.
    ///   - resources: files a SUIT device may ask for, by name (`app.bin` for `file://app.bin`).
    ///   - onSlotsRead: awaited once with the slots first read, before the next command (see
    ///     ``SlotsObserver``).
    /// - Returns: the run, as ``run(_:onSlotsRead:)``.
    public func run(
        images: [FirmwarePackage.Image],
        resources: [String: Data] = [:],
        onSlotsRead: SlotsObserver? = nil
    ) -> FirmwareUpgradeRun {
        let isSUIT = images.contains { $0.content == .suitEnvelope }
        return start(isSUIT ? .suit(images: images, resources: resources) : .mcuboot(images), onSlotsRead)
    }

    private func start(_ payload: UpgradePayload, _ onSlotsRead: SlotsObserver?) -> FirmwareUpgradeRun {
        FirmwareUpgradeRun { continuation, control in
            var driver = FirmwareUpgradeDriver(
                upgrade: self,
                payload: payload,
                control: control,
                continuation: continuation,
                onSlotsRead: onSlotsRead
            )
            await driver.run()
        }
    }
}

/// One upgrade in progress: an `AsyncSequence` of its events, with its own pause, resume and
/// cancel. Iterate it once.
///
/// ``pause()`` holds the upgrade at the next command (an upload stops after the chunk in flight
/// and resumes from the device's offset); ``resume()`` continues; ``cancel()`` and cancelling the
/// consuming task end it with ``FirmwareUpgradeError/Code/cancelled`` in every state.
public final class FirmwareUpgradeRun: AsyncSequence, Sendable {
    public typealias Element = FirmwareUpgrade.Event
    public typealias AsyncIterator = AsyncThrowingStream<FirmwareUpgrade.Event, any Error>.Iterator

    private let events: AsyncThrowingStream<FirmwareUpgrade.Event, any Error>
    private let control = RunControl()

    init(
        _ body:
            @escaping @Sendable (AsyncThrowingStream<FirmwareUpgrade.Event, any Error>.Continuation, RunControl)
            async -> Void
    ) {
        let (stream, continuation) = AsyncThrowingStream.makeStream(
            of: FirmwareUpgrade.Event.self,
            throwing: (any Error).self
        )
        events = stream
        let control = self.control
        let task = Task { await body(continuation, control) }
        control.setTask(task)
        continuation.onTermination = { _ in task.cancel() }
    }

    public func makeAsyncIterator() -> AsyncIterator { events.makeAsyncIterator() }

    /// Holds the upgrade at the next command, or after the upload chunk in flight.
    public func pause() { control.setPaused(true) }

    /// Continues a paused upgrade.
    public func resume() { control.setPaused(false) }

    /// Ends the upgrade with ``FirmwareUpgradeError/Code/cancelled``.
    public func cancel() { control.cancel() }

    /// Whether the caller paused the upgrade.
    public var isPaused: Bool { control.isPaused }
}

/// Pause, resume and cancel of one run, shared between its caller and its driver.
final class RunControl: Sendable {
    private struct State {
        var paused = false
        var cancelled = false
        var waiters: [CheckedContinuation<Void, Never>] = []
        var task: Task<Void, Never>?
    }

    private let state = Locked(State())

    var isPaused: Bool { state.withLock { $0.paused } }
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    func setPaused(_ value: Bool) {
        let resumed: [CheckedContinuation<Void, Never>] = state.withLock { state in
            state.paused = value
            guard !value else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in resumed { waiter.resume() }
    }

    func setTask(_ task: Task<Void, Never>) { state.withLock { $0.task = task } }

    func cancel() {
        let (task, resumed): (Task<Void, Never>?, [CheckedContinuation<Void, Never>]) = state.withLock { state in
            state.cancelled = true
            defer { state.waiters.removeAll() }
            return (state.task, state.waiters)
        }
        for waiter in resumed { waiter.resume() }
        task?.cancel()
    }

    func waitUntilResumed() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state in
                    if !state.paused || state.cancelled || Task.isCancelled { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let resumed = state.withLock { state in
                defer { state.waiters.removeAll() }
                return state.waiters
            }
            for waiter in resumed { waiter.resume() }
        }
    }
}
