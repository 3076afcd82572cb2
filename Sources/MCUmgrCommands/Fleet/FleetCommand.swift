import ArgumentParser
import Foundation
import MCUboot
import MCUmgr
import MCUmgrConnect
import MCUmgrDFU
import MCUmgrFleet
import MCUmgrFleetPostgres
import SMPLink

/// `mcumgr fleet`: staged rollouts over many devices, with state that survives.
struct FleetCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "fleet",
        abstract: "Upgrade many devices: a canary, waves, a failure budget, state that survives.",
        discussion: """
            The inventory is a text file, one device per line: a connection URL, an optional name, \
            optional key=value labels; # starts a comment. docs/FLEET.md describes the policies, the \
            state and running one rollout from several hosts.
            """,
        subcommands: [FleetUpgradeCommand.self, FleetStatusCommand.self]
    )
}

/// The options of `fleet` commands that talk to devices: `--conn` may be given several times.
struct FleetClientOptions: ParsableArguments {
    @Option(name: .customLong("conn"), help: "A device to upgrade, besides the inventory's (repeatable).")
    var connections: [String] = []

    @Option(parsing: .unconditional, help: "Seconds to wait for each answer.")
    var timeout: Double = 3

    @Option(parsing: .unconditional, help: "Times a request is sent again after a timeout.")
    var retries: Int = 3

    @Flag(name: .long, help: "One JSON object per device event on stdout, then a summary object.")
    var json = false

    @Flag(name: .shortAndLong, help: "More detail on stderr: -v decisions, -vv every frame.")
    var verbose: Int

    mutating func validate() throws {
        guard timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be between 0 and 3600 seconds")
        }
        guard (0...100).contains(retries) else { throw ValidationError("--retries must be between 0 and 100") }
    }

    var clientConfiguration: SMPClient.Configuration {
        let verbosity = verbose
        return SMPClient.Configuration(
            timeout: .milliseconds(Int(timeout * 1000)),
            retries: retries,
            makeLogger: { StderrLogHandler.logger($0, verbosity: verbosity) }
        )
    }
}

/// `mcumgr fleet upgrade FILE --inventory PATH …`.
struct FleetUpgradeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upgrade",
        abstract: "Upgrade every device of an inventory, in a staged rollout that resumes.",
        discussion: """
            Devices already running the image (confirmed) end already-current with nothing uploaded. \
            A canary of N devices goes first, alone: any canary failure halts the rollout. Then the \
            waves, each starting when the one before ended within the budget. Once more devices failed \
            or were unreachable than --max-failures allows, nothing new starts; upgrades in flight \
            finish. Link failures are retried with back-off; a refusal or a failed verification never \
            is. Run the same command again to resume: ended devices are not touched, and the final table \
            says which devices this run contacted and which it shows from an earlier run. A record of \
            a name at another URL is another device's: the inventory's device is planned afresh. Exit \
            status: 0 every device upgraded or already current (in this run, or at the same URL in an \
            earlier one), 3 any failed, unreachable or skipped, 130 interrupted (Ctrl-C: upgrades in \
            flight are cancelled safely; a second Ctrl-C exits).
            """
    )

    @OptionGroup var client: FleetClientOptions

    @Argument(help: "An MCUboot image (.bin) or firmware package (.zip) for every device.")
    var file: String

    @Option(help: "The inventory file: one device per line (URL [NAME] [key=value...]).")
    var inventory: String?

    @Option(help: "test-and-confirm, confirm-only, test-only or upload-only.")
    var mode: FirmwareUpgrade.Mode = .confirmOnly

    @Option(parsing: .unconditional, help: "Upgrades at once on this host.")
    var parallel: Int = 8

    @Option(parsing: .unconditional, help: "Devices upgraded first, alone; any failure among them halts.")
    var canary: Int = 0

    @Option(help: "Cumulative shares of the fleet per wave, e.g. 10%,50%,100%.")
    var waves: String = "100%"

    @Option(
        name: .customLong("max-failures"),
        help: "Failed or unreachable devices tolerated: N or P% (default: no limit)."
    )
    var maxFailures: String?

    @Option(
        help: "The rollout's state: a SQLite file (default ./mcumgr-fleet.sqlite) or postgres://… for several hosts."
    )
    var state: String = FleetStatusCommand.defaultState

    @Flag(name: .customLong("retry-failed"), help: "Start failed and unreachable devices of an earlier run again.")
    var retryFailed = false

    @Option(
        name: .customLong("link-retries"),
        parsing: .unconditional,
        help: "Restarts of a device's upgrade after a link failure."
    )
    var linkRetries: Int = 2

    @Option(
        name: .customLong("ble-per-adapter"),
        parsing: .unconditional,
        help: "Bluetooth LE upgrades at once per adapter."
    )
    var blePerAdapter: Int = 1

    @Option(help: "This worker's name, matched against devices' host= labels (default: the host name).")
    var worker: String?

    @Option(parsing: .unconditional, help: "Times a step of one device's upgrade that failed on the link is retried.")
    var stepRetries: Int = 3

    @Option(
        parsing: .unconditional,
        help: "With --state postgres://: seconds a claimed device stays this worker's without renewal."
    )
    var lease: Double = 30

    mutating func validate() throws {
        guard inventory != nil || !client.connections.isEmpty else {
            throw ValidationError("give --inventory PATH, or devices with --conn URL (repeatable)")
        }
        guard (1...1024).contains(parallel) else { throw ValidationError("--parallel must be between 1 and 1024") }
        guard canary >= 0 else { throw ValidationError("--canary must be 0 or more") }
        guard (0...100).contains(linkRetries) else { throw ValidationError("--link-retries must be between 0 and 100") }
        guard (1...64).contains(blePerAdapter) else {
            throw ValidationError("--ble-per-adapter must be between 1 and 64")
        }
        guard (0...100).contains(stepRetries) else { throw ValidationError("--step-retries must be between 0 and 100") }
        guard lease >= 1, lease <= 3600 else { throw ValidationError("--lease must be between 1 and 3600 seconds") }
        _ = try policy()
    }

    func policy() throws -> RolloutPolicy {
        do {
            return RolloutPolicy(
                canary: canary,
                waves: try RolloutPolicy.waves(parsing: waves),
                maxFailures: try maxFailures.map { try RolloutPolicy.Share(parsing: $0) },
                parallel: parallel,
                bleConnectionsPerAdapter: blePerAdapter,
                linkRetries: linkRetries
            )
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// The inventory file's devices, then those given with `--conn`.
    func devices() throws -> Inventory {
        var devices: [Inventory.Device] = []
        if let inventory {
            let data = try readLocalFile(inventory)
            guard let text = String(data: data, encoding: .utf8) else {
                throw InputFileError(.badData, "\(inventory) is not UTF-8 text")
            }
            do {
                devices = try Inventory(parsing: text).devices
            } catch {
                throw InputFileError(.badData, "\(inventory): \(error)")
            }
        }
        for text in client.connections {
            do {
                devices.append(Inventory.Device(url: try ConnectionURL(parsing: text)))
            } catch {
                throw ValidationError("--conn \(error)")
            }
        }
        guard !devices.isEmpty else {
            throw InputFileError(.badData, "\(inventory ?? "the inventory") lists no device")
        }
        do {
            return try Inventory(devices: devices)
        } catch {
            throw InputFileError(.badData, "\(error)")
        }
    }

    func run() async throws {
        let package = try loadPackage(file)
        let inventory = try devices()
        let store = try await FleetStatusCommand.openStore(state, exclusive: true)
        let fleet = try upgrade()
        let run = fleet.run(package, file: (file as NSString).lastPathComponent, inventory: inventory, store: store)
        let outcome: RolloutOutcome?
        do {
            outcome = try await follow(run, policy: fleet.policy)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        try Self.verdict(outcome)
    }

    /// The rollout the options describe, its devices' transports made from their URLs.
    private func upgrade() throws -> FleetUpgrade {
        let verbosity = client.verbose
        let timeout = client.timeout
        var fleet = FleetUpgrade(
            policy: try policy(),
            configuration: FirmwareUpgrade.Configuration(mode: mode, retries: stepRetries),
            clientConfiguration: client.clientConfiguration,
            worker: worker ?? ProcessInfo.processInfo.hostName,
            retryFailed: retryFailed,
            logger: StderrLogHandler.logger("mcumgr.fleet", verbosity: verbosity),
            makeTransport: { device in
                try CommandContext.transport(for: device.url, verbosity: verbosity, requestTimeout: timeout)
            }
        )
        fleet.lease = .milliseconds(Int64(lease * 1000))
        return fleet
    }

    /// Shows the rollout's events until it ends.
    /// - Returns: how it ended; `nil` when it ended before it began.
    /// - Throws: what ended the event stream early (the store failed, for one).
    private func follow(_ run: FleetRun, policy: RolloutPolicy) async throws -> RolloutOutcome? {
        let style: TransferProgressView.Style =
            client.json ? .json : (TransferProgressView.stderrIsTerminal ? .terminal : .lines)
        // The consumer is not the command's task: Ctrl-C cancels the command, which interrupts the
        // rollout; the rollout then ends its upgrades, saves their state and reports.
        let consumer = Task { () throws -> RolloutOutcome? in
            var view = FleetProgressView(style: style, policy: policy)
            var outcome: RolloutOutcome?
            for try await event in run {
                view.show(event)
                if case .finished(let ended) = event { outcome = ended }
            }
            return outcome
        }
        return try await withTaskCancellationHandler {
            try await consumer.value
        } onCancel: {
            run.interrupt()
        }
    }

    /// The exit status of a rollout: success only when every device runs the image.
    static func verdict(_ outcome: RolloutOutcome?) throws {
        guard let outcome else { throw FleetCommandFailure(.interrupted, "interrupted before the rollout began") }
        if outcome.interrupted {
            let pending = outcome.records.count { !$0.status.isFinal }
            throw FleetCommandFailure(
                .interrupted,
                "interrupted; \(pending) devices not ended; run the same command again to resume"
            )
        }
        guard !outcome.isSuccess else { return }
        let counts = outcome.counts
        var parts: [String] = []
        for status in [DeviceRecord.Status.failed, .unreachable, .skipped] where counts[status, default: 0] > 0 {
            parts.append("\(counts[status, default: 0]) \(status)")
        }
        var message = "not every device was upgraded: " + parts.joined(separator: ", ")
        if let halt = outcome.halt { message += "; the rollout halted: \(halt)" }
        throw FleetCommandFailure(.upgradeOutcome, message + " (mcumgr fleet status shows why)")
    }
}

/// A rollout that did not end with every device upgraded: an exit status and one line.
struct FleetCommandFailure: ExitStatusReporting, CustomStringConvertible {
    var status: ExitStatus
    var message: String

    init(_ status: ExitStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    var kind: String { status == .interrupted ? "interrupted" : "upgrade_outcome" }
    var description: String { message }
    var failureReport: FailureReport { FailureReport(status: status, kind: kind, message: message) }
}

/// `mcumgr fleet status`: the rollout's table, from its state.
struct FleetStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status",
        abstract: "Show where every device of the last rollout stands."
    )

    static let defaultState = "mcumgr-fleet.sqlite"

    @Option(help: "The rollout's state: a SQLite file (default ./mcumgr-fleet.sqlite) or postgres://….")
    var state: String = defaultState

    @Option(help: "A rollout's identity (default: the last one run).")
    var rollout: String?

    @Flag(name: .long, help: "List every rollout the state holds, the last one started first.")
    var list = false

    @Flag(name: .long, help: "Print one JSON document.")
    var json = false

    func validate() throws {
        if list, rollout != nil { throw ValidationError("--list shows every rollout; drop --rollout") }
    }

    func run() async throws {
        if list {
            let listings = try await Self.list(state)
            if json {
                CommandSupport.emit(FleetProgressView.listJSON(listings))
            } else {
                for line in FleetProgressView.list(listings) { Console.out(line) }
            }
            return
        }
        let (description, records, processRuns) = try await Self.read(state, rollout: rollout)
        if json {
            CommandSupport.emit(FleetProgressView.json(description, records, processRuns: processRuns))
        } else {
            for line in FleetProgressView.table(description, records, processRuns: processRuns) { Console.out(line) }
        }
    }

    /// Every rollout the state holds, the last one started first: what `fleet status --list` and
    /// the page's list of kept rollouts show.
    /// - Throws: the command's failure for a state that is not there or cannot be read.
    static func list(_ state: String) async throws -> [RolloutListing] {
        try requireFile(state)
        let store = try await openStore(state, exclusive: false)
        do {
            let listings = try await store.rollouts()
            await store.close()
            return listings
        } catch {
            await store.close()
            throw error
        }
    }

    /// A state file that is not there is named, not created (a database is the server's to say).
    private static func requireFile(_ state: String) throws {
        guard !isShared(state), !FileManager.default.fileExists(atPath: state) else { return }
        throw InputFileError(
            .unreadable,
            "\(state): no rollout state here (run mcumgr fleet upgrade first, or give --state)"
        )
    }

    /// A rollout as the state holds it now (the one named, or the last one run), and whether a
    /// process holds a state file (`nil` for a shared database): what `fleet status` and the
    /// page's kept rollout show.
    /// - Throws: the command's failure for a state without it.
    static func read(_ state: String, rollout: String?) async throws -> (
        RolloutDescription, [DeviceRecord], processRuns: Bool?
    ) {
        try requireFile(state)
        let store = try await openStore(state, exclusive: false)
        let found: (RolloutDescription, [DeviceRecord])?
        do {
            found = try await store.rollout(rollout)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        // On one host a running device is only truly running while a process holds the file.
        let processRuns: Bool? = isShared(state) ? nil : SQLiteRolloutStore.isInUse(path: state)
        guard let (description, records) = found else {
            let name = displayName(state)
            throw CommandFailure(rollout.map { "\(name) holds no rollout \($0)" } ?? "\(name) holds no rollout yet")
        }
        return (description, records, processRuns)
    }

    /// Opens the store a `--state` value names.
    static func openStore(_ state: String, exclusive: Bool) async throws -> any RolloutStore {
        do {
            if isShared(state) { return try await PostgresRolloutStore(url: state) }
            return try await SQLiteRolloutStore(path: state, exclusive: exclusive)
        } catch let error as RolloutStoreError where error.isBadLocation {
            throw ValidationError("--state \(error.message)")
        }
    }

    /// Whether `--state` names a database several hosts share.
    /// A `--state` value as a terminal or a page may show it: a database URL without its password.
    static func displayName(_ state: String) -> String {
        guard isShared(state), var components = URLComponents(string: state), components.password != nil else {
            return state
        }
        components.password = nil
        return components.string ?? "postgres://…"
    }

    static func isShared(_ state: String) -> Bool {
        state.hasPrefix("postgres://") || state.hasPrefix("postgresql://")
    }
}
