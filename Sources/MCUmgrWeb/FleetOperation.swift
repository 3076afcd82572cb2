import Foundation
import HTTPTypes
import MCUmgrFleet

/// The server's fleet rollout, running on its own task: closing the tab that started it stops
/// nothing, and every tab follows it through ``subscribe()``.
///
/// A rollout of a thousand devices changes its table thousands of times a second (every
/// device's steps and percentages); tabs get the table at most ``minimumInterval`` apart, every
/// change batched into the next send (the last one is never dropped), and the end at once. Each
/// tab's stream then sends only the rows that changed since its last message
/// (``FleetSnapshot/Update``).
actor FleetOperation {
    /// The shortest time between two snapshots.
    static let minimumInterval: Duration = .milliseconds(250)

    private let run: FleetRun
    private var snapshot: FleetSnapshot
    private let tabs: SnapshotBroadcast<FleetSnapshot>
    private var throttle = LiveUpdateThrottle(interval: minimumInterval)

    /// Creates the operation; ``start(closing:describe:)`` runs it.
    /// - Parameters:
    ///   - run: the library's run.
    ///   - snapshot: the rollout before it began.
    init(run: FleetRun, snapshot: FleetSnapshot) {
        self.run = run
        self.snapshot = snapshot
        // Every change is batched here (``changed()``), so the broadcast sends what it gets.
        tabs = SnapshotBroadcast(snapshot, interval: .zero)
    }

    /// Follows the run on a task of its own, independent of any request.
    /// - Parameters:
    ///   - store: the rollout's state, closed once the run ended (before the snapshot says so,
    ///     so that the next rollout can open it).
    ///   - describe: one line for the store's error.
    func start(closing store: any RolloutStore, describe: @escaping @Sendable (any Error) -> String) {
        Task { await self.follow(store: store, describe: describe) }
    }

    /// The current snapshot.
    var current: FleetSnapshot { snapshot }

    /// Whether it still runs.
    var isRunning: Bool { !snapshot.finished }

    /// What runs, in one line, for a refusal.
    var runningLine: String {
        let ended = snapshot.devices.count { DeviceRecord.Status(rawValue: $0.status)?.isFinal == true }
        return "a rollout runs: \(snapshot.file) (\(snapshot.mode)) on \(snapshot.devices.count) devices, "
            + "\(ended) ended; halt it or wait for its end"
    }

    /// The current snapshot at once, then every change; finishes after the last one.
    func subscribe() -> AsyncStream<FleetSnapshot> { tabs.subscribe() }

    /// Halts the rollout as the command line's Ctrl-C does: the library starts no more devices
    /// and cancels the upgrades in flight the way a single upgrade is cancelled (never leaving a
    /// device unbootable); they stay pending, and starting the same file and mode resumes them.
    /// The snapshot says `halting` until the run has ended.
    func halt() {
        guard !snapshot.finished else { return }
        run.interrupt()
        snapshot.status = "halting"
        publish()
    }

    private func follow(store: any RolloutStore, describe: @Sendable (any Error) -> String) async {
        var failure: String?
        do {
            for try await event in run {
                // The end is published after the store is closed, below.
                if case .finished = event {
                    snapshot.apply(event)
                    continue
                }
                if snapshot.apply(event) { changed() }
            }
        } catch {
            failure = describe(error)
        }
        await store.close()
        if let failure {
            snapshot.fail(failure)
        } else if !snapshot.finished {
            snapshot.fail("the rollout ended without its outcome")
        }
        snapshot.revision += 1
        tabs.finish(snapshot)
    }

    /// Something the table shows changed: sends it now if nothing went out for
    /// ``minimumInterval``, else once that much has passed, with every change made until then.
    private func changed() {
        let clock = ContinuousClock()
        switch throttle.progress(at: clock.now) {
        case .sendNow:
            publish()
        case .sendAt(let instant):
            Task {
                try? await Task.sleep(until: instant, clock: clock)
                self.publish()
            }
        case .alreadyScheduled:
            break
        }
    }

    /// Sends the snapshot to every tab (the end goes through `tabs.finish` instead).
    private func publish() {
        throttle.sent(at: ContinuousClock.now)
        guard !snapshot.finished else { return }
        snapshot.revision += 1
        tabs.publish(snapshot)
    }
}

/// The one rollout a server runs at a time, and the folder its state lives in.
actor FleetSlot {
    private var current: FleetOperation?
    private var starting = false
    private var folder: URL?

    // The state lives as long as the server: a server that ends (a test's, or `mcumgr ui` that
    // returns) takes its folder along rather than leaving one per run in the temporary directory.
    deinit {
        if let folder { try? FileManager.default.removeItem(at: folder) }
    }

    /// The rollout running now, or the last one.
    var operation: FleetOperation? { current }

    /// Starts a rollout unless one runs.
    /// - Parameter make: builds and starts the operation (opens the store in ``stateFile()``).
    /// - Returns: the new operation.
    /// - Throws: `WebError` 409 naming what runs; what `make` throws.
    func start(_ make: @Sendable (String) async throws -> FleetOperation) async throws -> FleetOperation {
        // Set before any suspension: two starts at once must not both pass the check below.
        guard !starting else { throw WebError(.conflict, "a rollout is being started; wait for it") }
        starting = true
        defer { starting = false }
        if let current, await current.isRunning { throw WebError(.conflict, await current.runningLine) }
        let operation = try await make(try stateFile())
        current = operation
        return operation
    }

    /// The SQLite state file of this server's rollouts, in a temporary folder of its own: the
    /// same file and mode started again resumes (ended devices are not touched), as the command
    /// line does with one `--state`.
    private func stateFile() throws -> String {
        if let folder { return folder.appendingPathComponent("fleet.sqlite").path }
        let made = FileManager.default.temporaryDirectory.appendingPathComponent(
            "mcumgr-ui-fleet-\(UUID().uuidString)",
            isDirectory: true
        )
        do {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        } catch {
            throw WebError(.internalServerError, "cannot create the rollout's state folder \(made.path)")
        }
        folder = made
        return made.appendingPathComponent("fleet.sqlite").path
    }
}
