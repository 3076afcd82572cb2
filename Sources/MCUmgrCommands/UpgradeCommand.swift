import ArgumentParser
import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBytes
import SMPCore

/// `mcumgr upgrade FILE`: the whole firmware-upgrade lifecycle — plan from the device's slots,
/// upload, test or confirm, reset, reconnect, verify — with a live progress display and a
/// before/after summary of the slots.
struct UpgradeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Upgrade a device's firmware: upload, test/confirm, reset, reconnect and verify.",
        discussion: """
            FILE is an MCUboot image (.bin), a firmware package (.zip with manifest.json, multi-image \
            and DirectXIP included) or a SUIT envelope (.suit). The plan comes from the device's image \
            list: images already running are skipped, images already uploaded are not sent again, an \
            interrupted upload resumes. After the reset the image list is read again and the outcome \
            checked: a revert, a refused downgrade or a missing image is an error. docs/UPGRADE.md lists \
            the commands of each mode. Try it without hardware: mcumgr --conn sim:// upgrade FILE
            """
    )

    @OptionGroup var global: GlobalOptions

    @Argument(help: "An MCUboot image (.bin), a firmware package (.zip) or a SUIT envelope (.suit).")
    var file: String

    @Option(help: "test-and-confirm, confirm-only, test-only or upload-only.")
    var mode: FirmwareUpgrade.Mode = .confirmOnly

    @Option(parsing: .unconditional, help: CommandSupport.windowHelp)
    var window: Int?

    @Option(parsing: .unconditional, help: CommandSupport.alignmentHelp)
    var alignment: Int = 1

    @Option(parsing: .unconditional, help: "Largest SMP frame the device reassembles, if smaller than its buffer.")
    var reassemblySize: Int?

    @Flag(help: "Erase the application's settings storage after the upload.")
    var eraseSettings = false

    @Flag(
        help: "Upload an image older than the running one even when the device refuses downgrades (it will erase it)."
    )
    var allowDowngrade = false

    @Option(
        parsing: .unconditional,
        help: "Seconds the bootloader needs to swap after the reset (waited before reconnecting)."
    )
    var swapTime: Double = 0

    @Option(parsing: .unconditional, help: "Seconds to keep reconnecting after a reset.")
    var reconnectTimeout: Double = 60

    @Option(
        parsing: .unconditional,
        help: "Seconds the first chunk of each image may take (the device erases the slot)."
    )
    var firstChunkTimeout: Double = 40

    @Option(parsing: .unconditional, help: "Times a step that failed on the link is retried after reconnecting.")
    var stepRetries: Int = 3

    @Flag(
        help: """
            The device is in MCUboot's serial recovery (its application is broken, or the recovery \
            button was held): upload to the primary slots, reset, verify.
            """
    )
    var recovery = false

    mutating func validate() throws {
        try CommandSupport.checkWindow(window)
        try CommandSupport.checkAlignment(alignment)
        if let reassemblySize, !(64...65535).contains(reassemblySize) {
            throw ValidationError("--reassembly-size must be between 64 and 65535")
        }
        guard swapTime >= 0, swapTime <= 3600 else {
            throw ValidationError("--swap-time must be between 0 and 3600 seconds")
        }
        guard reconnectTimeout > 0, reconnectTimeout <= 3600 else {
            throw ValidationError("--reconnect-timeout must be between 0 and 3600 seconds")
        }
        guard firstChunkTimeout > 0, firstChunkTimeout <= 3600 else {
            throw ValidationError("--first-chunk-timeout must be between 0 and 3600 seconds")
        }
        guard (0...100).contains(stepRetries) else { throw ValidationError("--step-retries must be between 0 and 100") }
    }

    /// The engine configuration the options ask for.
    var upgradeConfiguration: FirmwareUpgrade.Configuration {
        FirmwareUpgrade.Configuration(
            mode: mode,
            window: window,
            byteAlignment: alignment,
            reassemblyBufferSize: reassemblySize,
            eraseAppSettings: eraseSettings,
            allowDowngrade: allowDowngrade,
            estimatedSwapTime: .milliseconds(Int64(swapTime * 1000)),
            firstChunkTimeout: .milliseconds(Int64(firstChunkTimeout * 1000)),
            reconnectTimeout: .milliseconds(Int64(reconnectTimeout * 1000)),
            retries: stepRetries,
            recovery: recovery
        )
    }

    func run() async throws {
        let package = try loadPackage(file)
        let url = try CommandContext.connectionURL(global)
        let transport = try CommandContext.transport(
            for: url,
            verbosity: global.verbose,
            requestTimeout: global.timeout
        )
        let upgrade = FirmwareUpgrade(
            transport: transport,
            configuration: upgradeConfiguration,
            clientConfiguration: CommandContext.clientConfiguration(global),
            logger: StderrLogHandler.logger("mcumgr.upgrade", verbosity: global.verbose)
        )
        var view = UpgradeProgressView(
            style: global.json ? .json : (TransferProgressView.stderrIsTerminal ? .terminal : .lines),
            file: (file as NSString).lastPathComponent
        )
        do {
            for try await event in upgrade.run(package) { try view.show(event) }
            try Task.checkCancellation()
        } catch {
            throw view.ending(error)
        }
    }
}

extension FirmwareUpgrade.Mode: ExpressibleByArgument {}

/// Draws an upgrade's events: states and a progress bar redrawn in place on a terminal (stderr),
/// plain lines when stderr is not a terminal, or one JSON object per line on stdout with
/// `--json`. The summary (plan, before/after slots) goes to stdout.
struct UpgradeProgressView {
    let style: TransferProgressView.Style
    let file: String
    private var lastStep = -1
    private var lastDraw: ContinuousClock.Instant?
    private var drewBar = false
    private var state: FirmwareUpgrade.State = .idle
    /// The upload's progress, for saying how far an interrupted upgrade got.
    private var lastUpload: TransferProgress?
    private let clock = ContinuousClock()

    init(style: TransferProgressView.Style, file: String) {
        self.style = style
        self.file = file
    }

    mutating func show(_ event: FirmwareUpgrade.Event) throws {
        switch event {
        case .stateChanged(let from, let to):
            state = to
            endBar()
            if style == .json {
                CommandSupport.emit(
                    .object([("event", .string("state")), ("from", .string("\(from)")), ("to", .string("\(to)"))])
                )
            } else if to != .succeeded {
                Console.err("» \(to)")
            }
            lastStep = -1
        case .planned(let plan):
            if style == .json {
                CommandSupport.emit(Self.json(plan))
            } else {
                for line in Self.text(plan) { Console.out(line) }
            }
        case .uploadProgress(let progress):
            showProgress(progress)
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
                CommandSupport.emit(try Self.json(summary))
            } else {
                for line in Self.text(summary, file: file) { Console.out(line) }
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
        if style == .json, let error = error as? FirmwareUpgradeError {
            CommandSupport.emit(
                .object([
                    ("event", .string("failed")), ("state", .string("\(error.state)")),
                    ("code", .string("\(error.code)")),
                    ("message", .string(error.message)),
                ])
            )
        }
        guard interrupted else { return error }
        return Interrupted.upgrade(
            at: (error as? FirmwareUpgradeError)?.state ?? state,
            uploadPercent: lastUpload.map(TransferProgressView.percent)
        )
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

    // MARK: - Rendering

    static func text(_ plan: FirmwareUpgradePlan) -> [String] {
        var lines = ["plan (\(plan.mode)\(plan.bootloaderMode.map { ", bootloader mode \($0)" } ?? "")):"]
        for image in plan.images {
            lines.append("  image \(image.imageIndex) \(image.version ?? "?"): \(image.action) — \(image.reason)")
        }
        lines.append(
            "  steps: " + (plan.steps.isEmpty ? "none" : plan.steps.map(\.description).joined(separator: ", "))
        )
        return lines
    }

    static func json(_ plan: FirmwareUpgradePlan) -> JSONValue {
        .object([
            ("event", .string("plan")),
            ("mode", .string(plan.mode.rawValue)),
            ("bootloader_mode", plan.bootloaderMode.map { .int(Int64($0.rawValue)) } ?? .null),
            (
                "images",
                .array(
                    plan.images.map { image in
                        .object([
                            ("image", .int(Int64(image.imageIndex))), ("slot", .int(Int64(image.slot))),
                            ("version", image.version.map { .string($0) } ?? .null),
                            ("hash", .string(Hex.encode(image.hash))),
                            ("action", .string(image.action.rawValue)), ("reason", .string(image.reason)),
                        ])
                    }
                )
            ),
            ("steps", .array(plan.steps.map { .string($0.description) })),
            ("warnings", .array(plan.warnings.map { .string($0) })),
        ])
    }

    static func text(_ summary: FirmwareUpgrade.Summary, file: String) -> [String] {
        let seconds = String(format: "%.1f", TransferProgressView.seconds(summary.duration))
        var lines: [String] = []
        if summary.isUpToDate {
            lines.append("\(file): the device already runs it; nothing to do")
        } else {
            lines.append(
                "\(file): upgraded in \(seconds) s (\(TransferProgressView.bytes(summary.uploadedBytes)) uploaded, mode \(summary.plan?.mode.rawValue ?? "?"))"
            )
        }
        lines += downgrades(summary)
        if !summary.before.isEmpty {
            lines.append("before:")
            lines += ImageCommands.text(.init(images: summary.before)).map { "  " + $0 }
        }
        if !summary.after.isEmpty {
            lines.append("after:")
            lines += ImageCommands.text(.init(images: summary.after)).map { "  " + $0 }
        }
        return lines + nextSteps(summary)
    }

    /// The images the upgrade took to an older version than the one the device ran, named as
    /// downgrades (a device without downgrade prevention takes them without a word).
    static func downgrades(_ summary: FirmwareUpgrade.Summary) -> [String] {
        guard let plan = summary.plan, !summary.isUpToDate else { return [] }
        return plan.images.compactMap { image in
            let running = summary.before.first { Int($0.imageNumber) == image.imageIndex && $0.isActive }
            guard image.action != .skip, let version = image.version, let running,
                let new = ImageVersion(version), let old = ImageVersion(running.version), new < old
            else { return nil }
            return "image \(image.imageIndex): a downgrade, from \(running.version) to \(version)"
        }
    }

    /// What the device is left with when the mode stops short of a confirmed image, and the
    /// command that finishes the job.
    static func nextSteps(_ summary: FirmwareUpgrade.Summary) -> [String] {
        guard let plan = summary.plan, !summary.isUpToDate else { return [] }
        var lines: [String] = []
        for image in plan.images where image.action != .skip {
            let hash = Data(image.hash)
            let slots = summary.after.filter { $0.hash == hash && Int($0.imageNumber) == image.imageIndex }
            let version = image.version ?? slots.first?.version ?? "the new image"
            let hex = Hex.encode(image.hash)
            switch plan.mode {
            case .uploadOnly:
                guard let slot = slots.first(where: { !$0.isActive }) else { continue }
                lines.append(
                    "image \(image.imageIndex): \(version) uploaded to slot \(slot.slot), not marked; run "
                        + "`mcumgr image test \(hex)` (one boot, reverts unless confirmed) or "
                        + "`mcumgr image confirm \(hex)` (permanent), then `mcumgr os reset`"
                )
            case .testOnly:
                guard slots.contains(where: { $0.isActive && !$0.isConfirmed }) else { continue }
                lines.append(
                    "image \(image.imageIndex): running \(version) in test mode: confirm it "
                        + "(`mcumgr image confirm \(hex)`) or it reverts at the next reset"
                )
            default:
                continue
            }
        }
        return lines
    }

    static func json(_ summary: FirmwareUpgrade.Summary) throws -> JSONValue {
        func slots(_ states: [ImageManagement.SlotState]) throws -> JSONValue {
            if case .object(let members) = try ImageCommands.json(.init(images: states)), let images = members.first?.1
            {
                return images
            }
            return .array([])
        }
        return .object([
            ("event", .string("completed")),
            ("up_to_date", .bool(summary.isUpToDate)),
            ("mode", summary.plan.map { .string($0.mode.rawValue) } ?? .null),
            ("bootloader", summary.bootloaderName.map { .string($0) } ?? .null),
            ("bootloader_mode", summary.bootloaderMode.map { .int(Int64($0.rawValue)) } ?? .null),
            ("uploaded_bytes", .int(Int64(summary.uploadedBytes))),
            ("seconds", .double((TransferProgressView.seconds(summary.duration) * 1000).rounded() / 1000)),
            ("before", try slots(summary.before)),
            ("after", try slots(summary.after)),
        ])
    }
}
