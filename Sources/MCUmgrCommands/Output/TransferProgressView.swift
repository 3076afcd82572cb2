import Foundation
import MCUmgr

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Draws transfer progress (uploads and downloads) the way the output goes:
///
/// - a terminal on stderr: one bar redrawn in place with `\r`, with percentage, bytes, rate
///   and ETA, ended by a newline;
/// - stderr redirected: a plain line at every tenth of the transfer (and at the end), so logs
///   stay short;
/// - `--json`: one JSON object per line on stdout (`{"event":"progress","off":…,"len":…,…}`),
///   at most one per percent, for scripts; the command's final document follows.
struct TransferProgressView {
    enum Style: Equatable {
        case terminal
        case lines
        case json
    }

    /// Whether the error sink is a terminal we may draw on (captured output never is).
    static var stderrIsTerminal: Bool { Console.error.isTerminal && Console.error.writePartial != nil }

    let label: String
    let style: Style
    private var lastStep = -1
    private var lastDraw: ContinuousClock.Instant?
    private var drewBar = false
    private let clock = ContinuousClock()

    /// Creates a view.
    /// - Parameters:
    ///   - label: what is transferred, e.g. `upload app.bin`.
    ///   - json: whether `--json` was given.
    init(label: String, json: Bool) {
        self.label = label
        style = json ? .json : (Self.stderrIsTerminal ? .terminal : .lines)
    }

    /// The last progress shown.
    private(set) var lastProgress: TransferProgress?

    /// Data bytes sent more than once (chunks the device refused, lost or ignored), counted
    /// against what this run had to send.
    var resentBytes: Int {
        guard let lastProgress else { return 0 }
        return max(0, lastProgress.bytesSent - (lastProgress.totalBytes - (resumedAt ?? 0)))
    }

    /// Shows one progress update.
    mutating func update(_ progress: TransferProgress) {
        lastProgress = progress
        switch style {
        case .json:
            // At most one object per percent, so a large transfer stays a readable stream.
            let percent = progress.totalBytes == 0 ? 100 : progress.bytesConfirmed * 100 / progress.totalBytes
            guard percent > lastStep else { return }
            lastStep = percent
            Console.out(Self.json(progress, label: label).rendered())
        case .lines:
            let step = progress.totalBytes == 0 ? 10 : progress.bytesConfirmed * 10 / progress.totalBytes
            guard step > lastStep else { return }
            lastStep = step
            Console.err(label + "  " + Self.summary(progress))
        case .terminal:
            let now = clock.now
            let finished = progress.bytesConfirmed >= progress.totalBytes
            if let lastDraw, now - lastDraw < .milliseconds(100), !finished { return }
            lastDraw = now
            drewBar = true
            Self.writeRawStderr("\r" + Self.bar(progress, label: label) + "\u{1B}[K")
        }
    }

    /// Shows what an upload reports: progress is drawn; a resumed session is said once (the rest,
    /// window changes and restarts, is in the `-v` log).
    mutating func update(_ event: TransferEvent) {
        switch event {
        case .progress(let progress):
            update(progress)
        case .resumed(let offset):
            resumedAt = offset
            if style != .json { note("the device continues an interrupted upload at \(Self.bytes(offset))") }
        case .windowChanged, .restarted:
            break
        }
    }

    /// Where the device resumed the transfer, if it did.
    private(set) var resumedAt: Int?

    private mutating func note(_ text: String) {
        finish()
        Console.err(label + "  " + text)
    }

    /// Ends the bar's line (terminal style), so what follows starts on a new line.
    mutating func finish() {
        if style == .terminal && drewBar {
            Self.writeRawStderr("\n")
            drewBar = false
        }
    }

    /// Ends the view after the transfer threw, and returns the error to throw.
    ///
    /// An interrupt becomes ``Interrupted``, saying how far the transfer got; its bar is left
    /// for the error line to replace (the error sink clears a drawn bar first), so the terminal
    /// is left with that one clean line. Any other failure ends the bar's line, keeping the last
    /// progress in sight above the error.
    /// - Parameters:
    ///   - error: what ended the transfer.
    ///   - resumes: whether the same command continues the transfer (an image upload).
    mutating func ending(_ error: any Error, resumes: Bool) -> any Error {
        guard Interrupted.isInterrupt(error) else {
            finish()
            return error
        }
        return Interrupted(percent: lastProgress.map(Self.percent) ?? 0, resumes: resumes)
    }

    // MARK: - Formatting

    static func json(_ progress: TransferProgress, label: String) -> JSONValue {
        .object([
            ("event", .string("progress")),
            ("stage", .string(label)),
            ("off", .int(Int64(progress.bytesConfirmed))),
            ("len", .int(Int64(progress.totalBytes))),
            ("sent", .int(Int64(progress.bytesSent))),
            ("rate", .double((progress.bytesPerSecond * 10).rounded() / 10)),
            ("eta", progress.estimatedTimeRemaining.map { .double((seconds($0) * 10).rounded() / 10) } ?? .null),
        ])
    }

    /// The share confirmed, in whole percent (rounded down: 100 only when complete).
    static func percent(_ progress: TransferProgress) -> Int {
        Int((progress.fraction * 100).rounded(.down))
    }

    /// `45%  12.3 KiB/27.0 KiB  8.1 KiB/s  ETA 0:02`.
    static func summary(_ progress: TransferProgress) -> String {
        let percent = percent(progress)
        var text =
            String(repeating: " ", count: max(0, 3 - "\(percent)".count)) + "\(percent)%  "
            + "\(bytes(progress.bytesConfirmed))/\(bytes(progress.totalBytes))"
        if progress.bytesPerSecond > 0 { text += "  \(bytes(Int(progress.bytesPerSecond)))/s" }
        if progress.bytesConfirmed >= progress.totalBytes {
            return text
        }
        if let eta = progress.estimatedTimeRemaining { text += "  ETA \(clockTime(seconds(eta)))" }
        return text
    }

    /// `upload app.bin [##########··········]  45%  …`.
    static func bar(_ progress: TransferProgress, label: String, width: Int = 24) -> String {
        let filled = min(width, Int((progress.fraction * Double(width)).rounded(.down)))
        return label + " [" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled)
            + "] " + summary(progress)
    }

    /// Bytes for people: `512 B`, `12.3 KiB`, `1.50 MiB` (the library's words, shared with the
    /// web page).
    static func bytes(_ count: Int) -> String { TransferProgress.byteText(count) }

    /// Seconds as `m:ss` (or `h:mm:ss`).
    static func clockTime(_ seconds: Double) -> String {
        let total = Int(seconds.rounded(.up))
        let (hours, minutes, secs) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, secs) : String(format: "%d:%02d", minutes, secs)
    }

    /// A duration in seconds.
    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// A transfer's duration for JSON output: seconds, to the millisecond.
    static func jsonSeconds(_ duration: Duration) -> JSONValue {
        .double((seconds(duration) * 1000).rounded() / 1000)
    }

    /// How long a transfer took and how fast it went: `4.6 KiB in 0.3 s (15.2 KiB/s)` (the
    /// library's words, shared with the web page).
    static func completion(bytes count: Int, elapsed: Duration) -> String {
        TransferProgress.completionText(bytes: count, elapsed: elapsed)
    }

    /// A duration for people: `28 ms` under a second, `1.4 s` from there.
    static func duration(_ elapsed: Duration) -> String { TransferProgress.durationText(elapsed) }

    private static func writeRawStderr(_ text: String) {
        Console.error.writePartial?(text)
    }
}
