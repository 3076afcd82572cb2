import Foundation
import MCUboot
import MCUmgrDFU

/// One firmware upgrade of one device, running on its own task: closing the tab that started
/// it stops nothing, and every tab follows it through ``subscribe()``.
///
/// Progress arrives many times a second; tabs get at most ``minimumInterval`` apart a snapshot
/// (the last one is never dropped), other changes at once.
actor UpgradeOperation: DeviceOperation {
    /// The shortest time between two progress-only snapshots.
    static let minimumInterval: Duration = .milliseconds(250)

    private let run: FirmwareUpgradeRun
    private let environment: WebEnvironment
    private let connection: String
    private var snapshot: OperationSnapshot
    private let tabs: SnapshotBroadcast<OperationSnapshot>
    private var cancelRequested = false

    /// Creates the operation; ``start()`` runs it.
    /// - Parameters:
    ///   - run: the engine's run.
    ///   - file: the firmware file's name.
    ///   - mode: the mode.
    ///   - connection: the device's URL, for the result's words.
    ///   - environment: the words.
    init(
        run: FirmwareUpgradeRun,
        file: String,
        mode: FirmwareUpgrade.Mode,
        connection: String,
        environment: WebEnvironment
    ) {
        self.run = run
        self.environment = environment
        self.connection = connection
        snapshot = OperationSnapshot(
            id: UUID().uuidString,
            revision: 0,
            kind: "upgrade",
            file: file,
            mode: mode.rawValue,
            status: "running",
            plan: [],
            steps: [],
            progress: nil,
            messages: [],
            result: [],
            error: nil,
            finished: false
        )
        tabs = SnapshotBroadcast(snapshot, interval: Self.minimumInterval)
    }

    /// Runs the upgrade on a task of its own, independent of any request.
    func start() {
        Task { await self.follow() }
    }

    /// The current snapshot.
    var current: OperationSnapshot { snapshot }

    /// Whether it still runs (or is paused).
    var isRunning: Bool { !snapshot.finished }

    /// The current snapshot at once, then every change; finishes after the last one.
    func subscribe() -> AsyncStream<OperationSnapshot> { tabs.subscribe() }

    /// Pauses the upload between chunks (an upgrade can always pause: no throw).
    func pause() {
        guard !snapshot.finished else { return }
        run.pause()
        snapshot.status = "paused"
        publish()
    }

    /// Resumes a paused upload.
    func resume() {
        guard !snapshot.finished else { return }
        run.resume()
        snapshot.status = "running"
        publish()
    }

    /// Stops the upgrade; an upload can be resumed by starting the same file again.
    func cancel() {
        guard !snapshot.finished else { return }
        cancelRequested = true
        run.cancel()
    }

    private func follow() async {
        do {
            for try await event in run { handle(event) }
            if !snapshot.finished { finish(status: cancelRequested ? "cancelled" : "failed", error: nil) }
        } catch {
            if cancelRequested || error is CancellationError {
                finish(status: "cancelled", error: "cancelled; start the same file again to resume the upload")
            } else {
                finish(status: "failed", error: environment.describe(Self.explained(error, connection: connection)))
            }
        }
    }

    /// An upgrade refused because a reset would act on something nobody asked for, said as
    /// `mcumgr upgrade` says it: what holds the slot, that nothing was changed, and the commands
    /// that clear the way (`ImageStateGuard`'s words, with this device's URL).
    static func explained(_ error: any Error, connection: String) -> any Error {
        guard var upgrade = error as? FirmwareUpgradeError, !upgrade.pendingBootChanges.isEmpty else { return error }
        upgrade.message = ImageStateGuard.waysOut(
            upgrade.pendingBootChanges,
            command: API.command(connection),
            then: "run the upgrade again"
        )
        return upgrade
    }

    private func handle(_ event: FirmwareUpgrade.Event) {
        switch event {
        case .stateChanged(_, let to):
            if let last = snapshot.steps.indices.last { snapshot.steps[last].outcome = "done" }
            snapshot.steps.append(.init(name: to.description, outcome: "running"))
        case .planned(let plan):
            snapshot.plan = environment.planLines(plan)
        case .uploadProgress(let progress):
            snapshot.progress = .init(
                bytes: progress.totalBytesConfirmed,
                total: progress.totalBytes,
                percent: Int((progress.fraction * 100).rounded(.down)),
                bytesPerSecond: progress.bytesPerSecond,
                secondsRemaining: progress.estimatedTimeRemaining.map {
                    Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18
                }
            )
            publish(progressOnly: true)
            return
        case .uploadResumed(let image, let offset):
            snapshot.messages.append("image \(image): the device already holds \(offset) bytes; resuming from there")
        case .reconnecting(let reconnecting):
            snapshot.messages.append(
                reconnecting.afterLinkLoss
                    ? "link lost; reconnecting (attempt \(reconnecting.attempt))"
                    : "reconnecting after the reset (attempt \(reconnecting.attempt))"
            )
        case .warning(let text):
            snapshot.messages.append("warning: \(text)")
        case .paused:
            snapshot.status = "paused"
        case .resumed:
            snapshot.status = "running"
        case .completed(let summary):
            snapshot.result = environment.resultLines(summary, snapshot.file, connection)
            if var progress = snapshot.progress, progress.total > 0 {
                progress.bytes = progress.total
                progress.percent = 100
                snapshot.progress = progress
            }
            finish(status: "succeeded", error: nil)
            return
        case .imagesRead, .windowChanged:
            return
        }
        publish()
    }

    private func finish(status: String, error: String?) {
        if let last = snapshot.steps.indices.last {
            snapshot.steps[last].outcome =
                status == "succeeded" ? "done" : status == "cancelled" ? "cancelled" : "failed"
        }
        snapshot.status = status
        snapshot.error = error
        snapshot.finished = true
        snapshot.revision += 1
        tabs.finish(snapshot)
    }

    /// Sends the snapshot to every tab, progress at most every ``minimumInterval``.
    private func publish(progressOnly: Bool = false) {
        snapshot.revision += 1
        tabs.publish(snapshot, progressOnly: progressOnly)
    }
}
