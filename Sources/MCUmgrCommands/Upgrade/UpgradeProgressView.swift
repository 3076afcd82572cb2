import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBytes
import SMPCore

/// Draws an upgrade's events: states and a progress bar redrawn in place on a terminal (stderr),
/// plain lines when stderr is not a terminal, or one JSON object per line on stdout with
/// `--json`. The summary (plan, before/after slots) goes to stdout.
struct UpgradeProgressView {
    let style: TransferProgressView.Style
    let file: String
    /// The mode asked for, for the ways out a refusal names.
    let mode: FirmwareUpgrade.Mode
    /// How the user reached the device, for the commands the summary suggests.
    let hints: CommandHints
    private var lastStep = -1
    private var lastDraw: ContinuousClock.Instant?
    private var drewBar = false
    private var state: FirmwareUpgrade.State = .idle
    /// The upload's progress, for saying how far an interrupted upgrade got.
    private var lastUpload: TransferProgress?
    /// The whole seconds left that the last reconnection attempt showed.
    private var lastReconnectSeconds: Int?
    private let clock = ContinuousClock()

    init(style: TransferProgressView.Style, file: String, mode: FirmwareUpgrade.Mode, hints: CommandHints) {
        self.style = style
        self.file = file
        self.mode = mode
        self.hints = hints
    }

    mutating func show(_ event: FirmwareUpgrade.Event) throws {
        switch event {
        case .stateChanged(let from, let to):
            state = to
            if to != .reconnecting { lastReconnectSeconds = nil }
            // Cancelled: the interrupt's own line replaces the bar (see `ending`), so the bar is
            // left open and no state line is drawn under it.
            if to != .cancelled || style == .json { endBar() }
            if style == .json {
                CommandSupport.emit(
                    .object([("event", .string("state")), ("from", .string("\(from)")), ("to", .string("\(to)"))])
                )
            } else if to != .succeeded && to != .cancelled {
                Console.err("» \(to)")
            }
            lastStep = -1
        case .imagesRead:
            // The plan that follows says what matters to a person; the fleet records the versions.
            break
        case .planned(let plan):
            if style == .json {
                CommandSupport.emit(UpgradeReport.json(plan))
            } else {
                for line in UpgradeReport.text(plan) { Console.out(line) }
            }
        case .uploadProgress(let progress):
            showProgress(progress)
        case .reconnecting(let attempt):
            showReconnecting(attempt)
        case .uploadResumed(let image, let offset):
            note("resume", "image \(image): the device continues the upload at \(TransferProgressView.bytes(offset))")
        case .warning(let text):
            note("warning", text)
        case .paused(let state):
            note("paused", "paused while \(state)")
        case .resumed(let state):
            note("resumed", "resumed while \(state)")
        case .windowChanged(let image, let change):
            // Said by the transfer log at -v; scripts get it as an event.
            if style == .json {
                CommandSupport.emit(
                    .object([
                        ("event", .string("window")), ("image", .int(Int64(image))),
                        ("from", .int(Int64(change.from))), ("to", .int(Int64(change.to))),
                        ("reason", .string("\(change.reason)")),
                    ])
                )
            }
        case .completed(let summary):
            endBar()
            if style == .json {
                CommandSupport.emit(try UpgradeReport.json(summary))
            } else {
                for line in UpgradeReport.text(summary, file: file, hints: hints) { Console.out(line) }
            }
        }
    }

    /// Ends the display after the upgrade threw, and returns the error to throw.
    ///
    /// An interrupt becomes ``Interrupted``: how far the upload got, or the step it stopped in;
    /// its bar is left for the error line to replace (the error sink clears a drawn bar first),
    /// so the terminal is left with that one clean line. Other failures end the bar's line,
    /// keeping the last progress in sight above the error.
    mutating func ending(_ error: any Error) -> any Error {
        let interrupted = Interrupted.isInterrupt(error)
        if !interrupted { endBar() }
        var error = error
        if let upgrade = error as? FirmwareUpgradeError, !upgrade.pendingBootChanges.isEmpty {
            error = UpgradeReport.slotHeld(upgrade, mode: mode, hints: hints)
        } else if var upgrade = error as? FirmwareUpgradeError, upgrade.code.category == .link {
            // As Ctrl-C says: the device keeps what it received, and the same command resumes.
            // The hint ends the line, after the cause. A device that never answered the first
            // request received nothing: there is nothing to resume, and saying so misleads.
            let percent = lastUpload.map(TransferProgressView.percent).flatMap { $0 < 100 ? $0 : nil }
            if let cause = upgrade.cause { upgrade.message += " (\(cause))" }
            upgrade.cause = nil
            if upgrade.state != .requestingParameters {
                upgrade.message +=
                    percent.map { "; the upload stopped at \($0)%: run the same command again to resume" }
                    ?? "; run the same command again to resume"
            }
            error = upgrade
        }
        if style == .json, let upgrade = error as? FirmwareUpgradeError {
            // The same vocabulary and words as the error object that follows.
            let report = FailureReport(error)
            CommandSupport.emit(
                .object([
                    ("event", .string("failed")), ("state", .string("\(upgrade.state)")),
                    ("kind", .string(report.kind)), ("code", .string(upgrade.code.name)),
                    ("message", .string(report.message)),
                ])
            )
        }
        guard interrupted else { return error }
        return Interrupted.upgrade(
            at: (error as? FirmwareUpgradeError)?.state ?? state,
            uploadPercent: lastUpload.map(TransferProgressView.percent)
        )
    }

    /// A reconnection attempt: on a terminal, the bar's line says it and how much longer it
    /// tries; as lines, at the first attempt and every 10 s; as JSON, once a second. After the
    /// upgrade's own reset the first attempt usually succeeds and says nothing.
    private mutating func showReconnecting(_ attempt: FirmwareUpgrade.Reconnecting) {
        guard attempt.afterLinkLoss || attempt.attempt > 1 else { return }
        let seconds = Int(TransferProgressView.seconds(attempt.remaining).rounded(.up))
        let why =
            attempt.afterLinkLoss
            ? "the link was lost" + (lastUpload.map { " at \(TransferProgressView.percent($0))%" } ?? "")
            : "the device resets"
        let text = "reconnecting (\(why)): attempt \(attempt.attempt), trying \(seconds) s more"
        defer { lastReconnectSeconds = seconds }
        switch style {
        case .json:
            guard lastReconnectSeconds == nil || seconds != lastReconnectSeconds else { return }
            CommandSupport.emit(
                .object([
                    ("event", .string("reconnecting")), ("after_link_loss", .bool(attempt.afterLinkLoss)),
                    ("attempt", .int(Int64(attempt.attempt))), ("remaining", .int(Int64(seconds))),
                ])
            )
        case .lines:
            guard lastReconnectSeconds.map({ seconds / 10 != $0 / 10 }) ?? true else { return }
            Console.err("  " + text)
        case .terminal:
            drewBar = true
            Console.error.writePartial?("\r  " + text + "\u{1B}[K")
        }
    }

    private mutating func note(_ kind: String, _ text: String) {
        endBar()
        if style == .json {
            CommandSupport.emit(.object([("event", .string(kind)), ("message", .string(text))]))
        } else {
            Console.err("  \(kind): \(text)")
        }
    }

    private mutating func showProgress(_ progress: FirmwareUpgrade.UploadProgress) {
        let transfer = TransferProgress(
            bytesConfirmed: progress.totalBytesConfirmed,
            totalBytes: progress.totalBytes,
            bytesSent: progress.totalBytesConfirmed,
            bytesPerSecond: progress.bytesPerSecond,
            estimatedTimeRemaining: progress.estimatedTimeRemaining
        )
        lastUpload = transfer
        let label = "\(state) image \(progress.image)"
        switch style {
        case .json:
            let percent = progress.totalBytes == 0 ? 100 : progress.totalBytesConfirmed * 100 / progress.totalBytes
            guard percent > lastStep else { return }
            lastStep = percent
            CommandSupport.emit(
                .object([
                    ("event", .string("progress")), ("image", .int(Int64(progress.image))),
                    ("off", .int(Int64(progress.imageBytesConfirmed))), ("len", .int(Int64(progress.imageBytes))),
                    ("total_off", .int(Int64(progress.totalBytesConfirmed))),
                    ("total_len", .int(Int64(progress.totalBytes))),
                    ("rate", .double((progress.bytesPerSecond * 10).rounded() / 10)),
                    (
                        "eta",
                        progress.estimatedTimeRemaining.map {
                            .double((TransferProgressView.seconds($0) * 10).rounded() / 10)
                        } ?? .null
                    ),
                ])
            )
        case .lines:
            let step = progress.totalBytes == 0 ? 10 : progress.totalBytesConfirmed * 10 / progress.totalBytes
            guard step > lastStep else { return }
            lastStep = step
            Console.err("  " + label + "  " + TransferProgressView.summary(transfer))
        case .terminal:
            let now = clock.now
            let finished = progress.totalBytesConfirmed >= progress.totalBytes
            if let lastDraw, now - lastDraw < .milliseconds(100), !finished { return }
            lastDraw = now
            drewBar = true
            // Through the sink, which then knows a bar is open and clears it before an error line.
            Console.error.writePartial?("\r  " + TransferProgressView.bar(transfer, label: label) + "\u{1B}[K")
        }
    }

    private mutating func endBar() {
        if drewBar {
            Console.error.writePartial?("\n")
            drewBar = false
        }
    }
}
