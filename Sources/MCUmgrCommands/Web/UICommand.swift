import ArgumentParser
import Foundation
import MCUboot
import MCUmgr
import MCUmgrConnect
import MCUmgrDFU
import MCUmgrFleet
import MCUmgrWeb
import SMPBLETransport

/// `mcumgr ui`: serves the device manager in a browser (`MCUmgrWeb`) and prints the one line
/// to open. The page reaches devices as the other commands do (`sim://` in-process too) and
/// says what they say.
struct UICommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ui",
        abstract: "Serve the device manager in a browser; prints the URL to open, with its access token.",
        discussion: """
            Listens on 127.0.0.1:8080 unless --listen says otherwise. Every request needs the token \
            in the printed URL (the first visit turns it into a cookie). Listening on an address \
            other machines can reach needs --allow-remote. Stop it with Ctrl-C.
            """
    )

    @OptionGroup var local: LocalOptions

    @Option(
        help: ArgumentHelp("Where to listen: HOST:PORT or [IPv6]:PORT (port 0: any free port).", valueName: "address")
    )
    var listen: String = "127.0.0.1:8080"

    @Flag(help: "Open the URL in the default browser.")
    var open = false

    @Flag(help: "Allow listening on an address other machines can reach (the token is still required).")
    var allowRemote = false

    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Seconds to wait for each answer from a device (up to 3600).", valueName: "s")
    )
    var deviceTimeout: Double = 3

    @Option(
        help: ArgumentHelp(
            "Keep the Fleet screen's rollouts here, as mcumgr fleet upgrade --state does: a SQLite file, or "
                + "postgres://… shared with other hosts (the page shows their rollouts too). "
                + "Default: a temporary folder, removed when the server stops.",
            valueName: "state"
        )
    )
    var state: String?

    func validate() throws {
        try local.refuseClientOptions(command: "ui", reason: "the page chooses its devices")
        guard deviceTimeout > 0, deviceTimeout <= 3600 else {
            throw ValidationError("--device-timeout must be between 0 and 3600 seconds")
        }
    }

    func run() async throws {
        var environment = Self.environment(timeout: deviceTimeout)
        if let state { environment.rolloutState = try await Self.rolloutState(state) }
        let server: WebServer
        do {
            let address = try ListenAddress(parsing: listen)
            server = try WebServer(
                configuration: .init(address: address, allowRemote: allowRemote),
                environment: environment
            )
        } catch {
            throw ValidationError(error.description)
        }
        if let warning = server.configuration.remoteWarning { Console.err(warning) }
        let open = open
        let json = local.json
        do {
            try await server.run { url in
                if json { CommandSupport.emit(.object([("url", .string(url))])) } else { Console.out(url) }
                if open { Self.openInBrowser(url) }
            }
        } catch let error as WebConfigurationError {
            throw CommandFailure("mcumgr ui: \(error)")
        } catch {
            throw CommandFailure("mcumgr ui: cannot serve on \(listen): \(error)")
        }
    }

    /// The page's connections, profiles and words: this command module's own.
    static func environment(timeout: Double) -> WebEnvironment {
        // The global options' defaults but the timeout: no `GlobalOptions` outside parsing.
        let configuration = SMPClient.Configuration(timeout: .milliseconds(Int(timeout * 1000)), retries: 3)
        // Read here, in the command's task: the server's tasks do not see a test's override.
        let directory = ProfileStore().directory
        let recent = RecentDevices(directory: directory)
        return WebEnvironment(
            connect: { url in try CommandContext.transport(for: url, verbosity: 0, requestTimeout: timeout) },
            profiles: { try ProfileStore(directory: directory).load() },
            loadRecent: { recent.load() },
            saveRecent: { recent.save($0) },
            loadPaths: { recent.loadPaths($0) },
            savePaths: { recent.savePaths($0, $1) },
            // The page's reader cannot raise `--timeout`: whoever started the server can.
            describe: { MCUmgrCommand.describe($0, timeoutOption: "mcumgr ui's --device-timeout") },
            planLines: { UpgradeReport.text($0) },
            resultLines: { summary, file, connection in
                UpgradeReport.text(summary, file: file, hints: CommandHints(connection: connection))
            },
            packageLines: { package, name in
                let reports = package.images.map { $0.mcuboot?.verify(publicKey: nil) }
                return ImageInfoCommand.text(package, reports: reports, file: name)
            },
            clientConfiguration: configuration,
            scanBluetooth: bluetoothScanner
        )
    }

    /// The Devices screen's Bluetooth scan: `mcumgr ble scan`'s, where BlueZ is.
    static var bluetoothScanner: (@Sendable (String?, Duration) async throws -> [WebEnvironment.BluetoothDevice])? {
        #if SMP_BLUEZ
            return { adapter, duration in
                let devices: [BlueZScanner.Device]
                do throws(BlueZError) {
                    devices = try await BlueZScanner.scan(adapter: adapter, timeout: duration)
                } catch {
                    // As `mcumgr ble scan` says it.
                    throw error.transportError
                }
                return devices.map {
                    WebEnvironment.BluetoothDevice(
                        name: $0.name,
                        address: $0.address,
                        rssi: $0.rssi,
                        adapter: $0.adapter,
                        connected: $0.connected
                    )
                }
            }
        #else
            return nil
        #endif
    }

    /// The rollouts' state of `--state`, opened once now so that a path or database that cannot
    /// be used is said before the server starts, not at the first rollout.
    static func rolloutState(_ state: String) async throws -> WebEnvironment.RolloutState {
        let probe = try await FleetStatusCommand.openStore(state, exclusive: false)
        await probe.close()
        let name = FleetStatusCommand.displayName(state)
        // The page gets the command line's line, with the state as it may show it.
        @Sendable func shown(_ error: any Error) -> any Error {
            guard name != state else { return error }
            return CommandFailure(MCUmgrCommand.describe(error).replacingOccurrences(of: state, with: name))
        }
        return WebEnvironment.RolloutState(
            name: name,
            open: {
                do {
                    return try await FleetStatusCommand.openStore(state, exclusive: true)
                } catch {
                    throw shown(error)
                }
            },
            status: { rollout in
                do {
                    let (description, records, processRuns) = try await FleetStatusCommand.read(state, rollout: rollout)
                    return FleetProgressView.table(description, records, processRuns: processRuns)
                } catch {
                    throw shown(error)
                }
            },
            list: {
                do {
                    return try await FleetStatusCommand.list(state)
                } catch {
                    throw shown(error)
                }
            }
        )
    }

    /// `xdg-open` or `open`; a browser that does not start leaves the printed URL.
    static func openInBrowser(_ url: String) {
        #if os(macOS)
            let opener = "/usr/bin/open"
        #else
            let opener = "/usr/bin/xdg-open"
        #endif
        let process = Process()
        process.executableURL = URL(fileURLWithPath: opener)
        process.arguments = [url]
        try? process.run()
    }
}
