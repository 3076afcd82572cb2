import Foundation

/// Where a device's operation stands, whole: what every tab receives, so a second tab or a
/// reopened one shows the same thing as the tab that started it.
struct OperationSnapshot: Codable, Sendable, Equatable {
    /// One step the engine went through, with how it ended.
    struct Step: Codable, Sendable, Equatable {
        /// The engine's state name, e.g. `uploading`.
        var name: String
        /// `running`, `done`, `failed` or `cancelled`.
        var outcome: String
    }

    /// The transfer's progress.
    struct Progress: Codable, Sendable, Equatable {
        /// Bytes the device has confirmed, over every image.
        var bytes: Int
        /// Bytes to upload, over every image.
        var total: Int
        /// Whole percent, 0 to 100 (the page's progress bar value).
        var percent: Int
        /// The current rate.
        var bytesPerSecond: Double
        /// Seconds left, when known.
        var secondsRemaining: Double?
    }

    /// The operation's own identity, new for each one: with ``revision`` it lets a tab drop an
    /// answer that arrives after a newer live update of the same operation (a cancel's answer,
    /// sent while it was still running, overtaken by the event that it ended).
    var id: String
    /// Counts every change, so a tab can tell an old snapshot from a new one.
    var revision: Int
    /// `upgrade`, `upload` or `download` (a file transfer).
    var kind: String
    /// The firmware file's name; for a file transfer, the path on the device.
    var file: String
    /// The upgrade mode, e.g. `test-and-confirm`; for a file transfer, its kind again.
    var mode: String
    /// `running`, `paused`, `succeeded`, `failed` or `cancelled`.
    var status: String
    /// The plan, as `mcumgr upgrade` prints it.
    var plan: [String]
    /// Each step so far.
    var steps: [Step]
    /// The upload's (or a download's) progress, once it started.
    var progress: Progress?
    /// Warnings and notes (a resumed upload, reconnecting).
    var messages: [String]
    /// The verified result, as `mcumgr upgrade` prints it, once done.
    var result: [String]
    /// The one-line error, when it failed.
    var error: String?
    /// No more changes will come.
    var finished: Bool
}
