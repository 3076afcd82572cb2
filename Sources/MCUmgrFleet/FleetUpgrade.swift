import Foundation
import Logging
import MCUboot
import MCUmgr
import MCUmgrConnect
import MCUmgrDFU
import SMPCore
import SMPLink

/// Upgrades a fleet: many `FirmwareUpgrade`s at once, in the order and within the limits of a
/// ``RolloutPolicy``, with the rollout's state kept in a ``RolloutStore`` so that running it again
/// resumes it.
///
/// ```swift
/// let inventory = try Inventory(contentsOf: URL(fileURLWithPath: "fleet.txt"))
/// let store = try await SQLiteRolloutStore(path: "fleet.state")
/// let fleet = FleetUpgrade(policy: RolloutPolicy(canary: 1, waves: [.percent(10), .percent(100)]))
/// for try await event in fleet.run(package, file: "app.bin", inventory: inventory, store: store) {
///     if case .ended(let record) = event { print(record.id, record.status) }
/// }
/// await store.close()
/// ```
///
/// The decisions live in ``RolloutStateMachine``; a run only starts the upgrades it names, feeds
/// back how each ended, writes every change to the store before acting on it, and wakes the
/// machine for retries.
public struct FleetUpgrade: Sendable {
    /// How the rollout proceeds.
    public var policy: RolloutPolicy
    /// The configuration of every device's upgrade.
    public var configuration: FirmwareUpgrade.Configuration
    /// The configuration of every client the upgrades open.
    public var clientConfiguration: SMPClient.Configuration
    /// This host's name, recorded with every attempt and matched against `host` labels.
    public var worker: String
    /// Start failed and unreachable devices of an earlier run again.
    public var retryFailed: Bool
    /// With a shared store: how long a claimed device stays this worker's without a renewal
    /// (renewed every third of it); a dead worker's devices wait this long.
    public var lease: Duration = .seconds(30)
    /// With a shared store: how often the worker asks for more devices while it waits.
    public var pollInterval: Duration = .milliseconds(500)
    /// The clock the rollout dates its records by and waits on (back-offs, leases, polling).
    public var clock: FleetClock = .system
    let makeTransport: @Sendable (Inventory.Device) throws -> any SMPTransport
    let logger: Logger

    /// Creates a fleet upgrade.
    /// - Parameters:
    ///   - policy: canary, waves, budget, concurrency, retries.
    ///   - configuration: every device's upgrade configuration.
    ///   - clientConfiguration: request timeout and retries of every client.
    ///   - worker: this host's name (by default the machine's host name).
    ///   - retryFailed: start failed and unreachable devices of an earlier run again.
    ///   - logger: where the upgrades log their decisions.
    ///   - makeTransport: the transport to a device (by default its URL's, see `ConnectionURL`).
    public init(
        policy: RolloutPolicy = .init(),
        configuration: FirmwareUpgrade.Configuration = .init(),
        clientConfiguration: SMPClient.Configuration = .init(),
        worker: String = ProcessInfo.processInfo.hostName,
        retryFailed: Bool = false,
        logger: Logger? = nil,
        makeTransport: @escaping @Sendable (Inventory.Device) throws -> any SMPTransport = {
            try $0.url.makeTransport()
        }
    ) {
        self.policy = policy
        self.configuration = configuration
        self.clientConfiguration = clientConfiguration
        self.worker = worker
        self.retryFailed = retryFailed
        self.logger = logger ?? Logger(label: "mcumgr.fleet")
        self.makeTransport = makeTransport
    }

    /// The rollout a package and this configuration make: the same package and mode resume it.
    /// - Parameters:
    ///   - package: the firmware.
    ///   - file: its file name, for people.
    public func rollout(of package: FirmwarePackage, file: String) -> RolloutDescription {
        var bytes: [UInt8] = Array(configuration.mode.rawValue.utf8)
        for image in package.images { bytes += [UInt8(truncatingIfNeeded: image.imageIndex)] + image.hash }
        let digest = ImageHashAlgorithm.sha256.hash(bytes).prefix(8).map { String(format: "%02x", $0) }.joined()
        return RolloutDescription(
            id: digest,
            file: file,
            mode: configuration.mode.rawValue,
            versions: package.images.compactMap { $0.version.map { "\($0)" } }
        )
    }

    /// Runs (or resumes) the rollout.
    /// - Parameters:
    ///   - package: the firmware for every device.
    ///   - file: the package's file name, for people and the store.
    ///   - inventory: the devices, in rollout order.
    ///   - store: where the rollout's state lives.
    /// - Returns: the run: its events end with ``FleetEvent/finished(_:)``, or throw a
    ///   ``RolloutStoreError`` when the store fails.
    public func run(_ package: FirmwarePackage, file: String, inventory: Inventory, store: any RolloutStore) -> FleetRun
    {
        let rollout = rollout(of: package, file: file)
        return FleetRun { events, inbox, messages in
            var driver = FleetDriver(
                fleet: self,
                package: package,
                rollout: rollout,
                devices: inventory.devices,
                store: store,
                events: events,
                inbox: inbox
            )
            await driver.run(rollout, devices: inventory.devices, messages: messages)
        }
    }
}

/// Something a fleet's run reports.
public enum FleetEvent: Sendable {
    /// The rollout was opened (or resumed): every device's record as it starts.
    case prepared(RolloutDescription, [DeviceRecord])
    /// The state held a record under a device's name at another URL: another device's. The
    /// device is planned afresh (`now`, pending); the earlier record is replaced.
    case replanned(earlier: DeviceRecord, now: DeviceRecord)
    /// The canary or a wave begins.
    case phase(RolloutPhase)
    /// A device's upgrade starts.
    case started(DeviceRecord)
    /// An event of a device's upgrade (states, progress, warnings).
    case upgrade(device: String, FirmwareUpgrade.Event)
    /// A device failed on the link and starts again at a time.
    case retrying(DeviceRecord, at: Date)
    /// A device ended: upgraded, already current, failed, unreachable or skipped.
    case ended(DeviceRecord)
    /// The rollout starts no more devices.
    case halted(RolloutGates.HaltReason)
    /// The rollout is over (or, interrupted, stopped: the devices left pending resume next time).
    case finished(RolloutOutcome)
}

/// A fleet upgrade in progress: an `AsyncSequence` of ``FleetEvent``s, and ``interrupt()``.
public final class FleetRun: AsyncSequence, Sendable {
    public typealias Element = FleetEvent
    public typealias AsyncIterator = AsyncThrowingStream<FleetEvent, any Error>.Iterator

    private let events: AsyncThrowingStream<FleetEvent, any Error>
    private let inbox: AsyncStream<FleetDriver.Message>.Continuation

    init(
        _ body:
            @escaping @Sendable (
                AsyncThrowingStream<FleetEvent, any Error>.Continuation, AsyncStream<FleetDriver.Message>.Continuation,
                AsyncStream<FleetDriver.Message>
            ) async -> Void
    ) {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: FleetEvent.self, throwing: (any Error).self)
        let (messages, inbox) = AsyncStream.makeStream(of: FleetDriver.Message.self)
        self.events = events
        self.inbox = inbox
        let task = Task { await body(continuation, inbox, messages) }
        continuation.onTermination = { _ in task.cancel() }
    }

    public func makeAsyncIterator() -> AsyncIterator { events.makeAsyncIterator() }

    /// Starts no more devices and cancels the upgrades in flight the way a single upgrade is
    /// cancelled (the device is never left unbootable); their devices stay pending, and running
    /// the rollout again resumes them. The events end with ``FleetEvent/finished(_:)``.
    public func interrupt() { inbox.yield(.interrupt) }
}

extension RolloutStore {
    /// Prepares the rollout (``RolloutStore/prepare(_:devices:retryFailed:)``) and reports, before
    /// ``FleetEvent/prepared(_:_:)``, each record of another URL it replaced, so that a device's
    /// history does not vanish without a word.
    func prepare(
        _ rollout: RolloutDescription,
        devices: [Inventory.Device],
        retryFailed: Bool,
        events: AsyncThrowingStream<FleetEvent, any Error>.Continuation
    ) async throws -> [DeviceRecord] {
        // Read before: prepare replaces them. With a shared store another worker may prepare in
        // between; that only changes which replacements this worker names.
        let earlier = try await self.rollout(rollout.id)?.1 ?? []
        let records = try await prepare(rollout, devices: devices, retryFailed: retryFailed)
        events.yield(.prepared(rollout, records))
        let byID = Dictionary(records.map { ($0.id, $0) }, uniquingKeysWith: { a, _ in a })
        for record in earlier {
            guard let now = byID[record.id], now.url != record.url else { continue }
            events.yield(.replanned(earlier: record, now: now))
        }
        return records
    }
}
