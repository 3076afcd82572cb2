import Foundation
import HTTPTypes
import MCUmgr

/// One file transfer with one device — an upload to a path or a download of one — running on
/// its own task, so closing the tab stops nothing and every tab follows it through
/// ``subscribe()``, as an upgrade's tabs do.
///
/// A finished download keeps its contents (``contents``) for the page to save; progress goes to
/// the tabs at most every ``minimumInterval`` (the last one is never dropped).
actor FileTransferOperation: DeviceOperation {
    /// Upload or download.
    enum Kind: String, Sendable {
        case upload, download
    }

    /// Where the transfer reports progress.
    typealias Report = @Sendable (TransferProgress) async -> Void
    /// The transfer itself, given a connected client, the upload's pause control and where to
    /// report; returns a download's contents (`nil` for an upload).
    typealias Work = @Sendable (SMPClient, TransferControl, @escaping Report) async throws -> Data?
    /// ``Work`` with its client already found (the session's).
    typealias Run = @Sendable (TransferControl, @escaping Report) async throws -> Data?

    /// The shortest time between two progress-only snapshots.
    static let minimumInterval: Duration = .milliseconds(250)

    /// Upload or download.
    let kind: Kind
    private let run: Run
    private let environment: WebEnvironment
    private let control = TransferControl()
    private var task: Task<Void, Never>?
    private var snapshot: OperationSnapshot
    private let tabs: SnapshotBroadcast<OperationSnapshot>
    private var cancelRequested = false
    private let began = ContinuousClock.now
    /// The local file's name, for an upload's result line.
    private let local: String?
    /// A finished download's contents.
    private(set) var contents: Data?

    /// Creates the operation; ``start()`` runs it.
    /// - Parameters:
    ///   - kind: upload or download.
    ///   - path: the path on the device.
    ///   - total: the bytes to move, when known before (an upload's size).
    ///   - local: the local file's name, when the page gave it.
    ///   - environment: the words for errors.
    ///   - run: the transfer.
    init(kind: Kind, path: String, total: Int?, local: String? = nil, environment: WebEnvironment, run: @escaping Run) {
        self.kind = kind
        self.local = local
        self.run = run
        self.environment = environment
        snapshot = OperationSnapshot(
            id: UUID().uuidString,
            revision: 0,
            kind: kind.rawValue,
            file: path,
            mode: kind.rawValue,
            status: "running",
            plan: [],
            steps: [.init(name: kind == .upload ? "uploading" : "downloading", outcome: "running")],
            progress: total.map { OperationSnapshot.Progress(bytes: 0, total: $0, percent: 0, bytesPerSecond: 0) },
            messages: [],
            result: [],
            error: nil,
            finished: false
        )
        tabs = SnapshotBroadcast(snapshot, interval: Self.minimumInterval)
    }

    /// Runs the transfer on a task of its own, independent of any request.
    func start() {
        task = Task { await self.follow() }
    }

    /// The current snapshot.
    var current: OperationSnapshot { snapshot }

    /// Whether it still runs (or is paused).
    var isRunning: Bool { !snapshot.finished }

    /// The current snapshot at once, then every change; finishes after the last one.
    func subscribe() -> AsyncStream<OperationSnapshot> { tabs.subscribe() }

    /// Pauses an upload after the chunks in flight.
    /// - Throws: `WebError` 409 for a download: the download engine has no pause.
    func pause() throws(WebError) {
        guard !snapshot.finished else { return }
        guard kind == .upload else {
            throw WebError(.conflict, "a download cannot be paused; cancel it and download again")
        }
        control.pause()
        snapshot.status = "paused"
        publish()
    }

    /// Resumes a paused upload from the device's offset.
    func resume() {
        guard !snapshot.finished, kind == .upload else { return }
        control.resume()
        snapshot.status = "running"
        publish()
    }

    /// Stops the transfer (a paused upload too).
    func cancel() {
        guard !snapshot.finished else { return }
        cancelRequested = true
        task?.cancel()
    }

    private func follow() async {
        do {
            let data = try await run(control) { progress in await self.progressed(progress) }
            // A cancelled transfer's events just end: that is no finished transfer.
            try Task.checkCancellation()
            contents = data
            let bytes = data?.count ?? snapshot.progress?.total ?? 0
            if var progress = snapshot.progress {
                progress.bytes = progress.total
                progress.percent = 100
                snapshot.progress = progress
            } else {
                snapshot.progress = .init(bytes: bytes, total: bytes, percent: 100, bytesPerSecond: 0)
            }
            // As `mcumgr fs` says it: `uploaded notes.txt to /lfs1/notes.txt: 11 B in 6 ms`.
            let completion = TransferProgress.completionText(bytes: bytes, elapsed: ContinuousClock.now - began)
            snapshot.result = [
                kind == .upload
                    ? "uploaded \(local ?? "the file") to \(snapshot.file): \(completion)"
                    : "downloaded \(snapshot.file): \(completion)"
            ]
            finish(status: "succeeded", error: nil)
        } catch {
            if cancelRequested || error is CancellationError {
                // An upload carries no hash by which the device could resume it, and a download
                // is kept only once complete: either starts over (as with `mcumgr fs`).
                finish(status: "cancelled", error: "cancelled; an interrupted file transfer starts over when run again")
            } else {
                finish(status: "failed", error: environment.describe(error))
            }
        }
    }

    private func progressed(_ progress: TransferProgress) {
        guard !snapshot.finished else { return }
        snapshot.progress = .init(
            bytes: progress.bytesConfirmed,
            total: progress.totalBytes,
            percent: Int((progress.fraction * 100).rounded(.down)),
            bytesPerSecond: progress.bytesPerSecond,
            secondsRemaining: progress.estimatedTimeRemaining.map(Self.seconds)
        )
        publish(progressOnly: true)
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
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
