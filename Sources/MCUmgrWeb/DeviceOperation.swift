/// What runs on a device for a while, on a task of its own, and every tab follows: an upgrade
/// or a file transfer. A device runs one at a time (``DeviceSession``).
protocol DeviceOperation: Actor {
    /// The current snapshot.
    var current: OperationSnapshot { get }
    /// Whether it still runs (or is paused).
    var isRunning: Bool { get }
    /// The current snapshot at once, then every change; finishes after the last one.
    func subscribe() -> AsyncStream<OperationSnapshot>
    /// Pauses it.
    /// - Throws: `WebError` 409 when it cannot be paused.
    func pause() throws(WebError)
    /// Resumes it after a pause.
    func resume()
    /// Stops it.
    func cancel()
}

extension OperationSnapshot {
    /// What runs, for a refusal while it does: `an upgrade with app.bin`, `an upload to /lfs1/a`.
    var activity: String {
        switch kind {
        case "upload": "an upload to \(file)"
        case "download": "a download of \(file)"
        default: "an upgrade with \(file)"
        }
    }
}
