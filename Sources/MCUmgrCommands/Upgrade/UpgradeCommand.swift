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

    @Option(
        parsing: .unconditional,
        help:
            "Seconds to keep reconnecting after any lost link: the reset the upgrade sends, or a link lost mid-upload."
    )
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

    @Flag(
        help: """
            When a test image runs unconfirmed and the upgrade needs its revert target's slot, \
            reset the device first so that MCUboot reverts it (shown in the plan). Without it the \
            upgrade stops before changing anything. Not with --mode upload-only, which never resets.
            """
    )
    var revertPending = false

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
        if revertPending && mode == .uploadOnly {
            throw ValidationError("--revert-pending resets the device, and --mode upload-only never does; choose one")
        }
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
            recovery: recovery,
            revertPending: revertPending
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
            file: (file as NSString).lastPathComponent,
            mode: mode,
            hints: CommandHints(global)
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
