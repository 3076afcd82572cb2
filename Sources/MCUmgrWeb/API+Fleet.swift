import Foundation
import Hummingbird
import MCUmgrConnect
import MCUmgrDFU
import MCUmgrFleet
import SMPLink

/// Fleet: a staged rollout over the devices of an inventory typed into the page, on the library
/// `MCUmgrFleet` (what `mcumgr fleet upgrade` runs), its snapshot, its live events and Halt.
extension API {
    /// The Fleet form.
    struct StartFleet: Codable, Sendable {
        /// The inventory's text, as `mcumgr fleet upgrade --inventory` reads it.
        var inventory: String
        /// A firmware file the page sent (`/api/firmware`).
        var firmware: String
        var mode: String?
        var canary: Int?
        /// Cumulative shares, e.g. `10%,50%,100%`.
        var waves: String?
        /// Failed or unreachable devices tolerated: `N` or `P%` (empty: no limit).
        var maxFailures: String?
        var parallel: Int?
        /// Start failed and unreachable devices of an earlier run again (`--retry-failed`).
        var retryFailed: Bool?
        /// Restarts of a device's upgrade after a link failure (`--link-retries`, default 2).
        var linkRetries: Int?
        /// Bluetooth LE upgrades at once per adapter (`--ble-per-adapter`, default 1).
        var blePerAdapter: Int?
        /// This server's worker name in a shared state (`--worker`; default: the host name).
        var worker: String?
    }

    struct FleetState: Encodable, Sendable {
        var rollout: FleetSnapshot?
    }

    /// A rollout kept in the server's state, as `mcumgr fleet status` prints it.
    struct KeptRollout: Encodable, Sendable {
        var state: String
        var lines: [String]
    }

    /// The rollouts kept in the server's state, the last one started first.
    struct KeptRollouts: Encodable, Sendable {
        struct Rollout: Encodable, Sendable {
            var id: String
            var file: String
            var mode: String
            var versions: [String]
            /// When it was last started or resumed (ISO 8601).
            var started: String
            /// Its devices by status, in one line.
            var devices: String
        }

        var state: String
        var rollouts: [Rollout]
    }

    /// The largest inventory the page may type: far more devices than a browser table shows well.
    static let inventoryLimit = 32 << 10
    /// The most devices of one rollout from the page.
    static let inventoryDevices = 1024

    func registerFleet(on router: Router<BasicRequestContext>) {
        router.get("/api/fleet") { _, _ in
            try await answer { try Self.json(FleetState(rollout: await fleet.operation?.current)) }
        }
        router.post("/api/fleet") { request, _ in
            try await answer {
                let body = try await Self.body(StartFleet.self, from: request)
                let operation = try await startFleet(body)
                return try Self.json(FleetState(rollout: await operation.current))
            }
        }
        router.get("/api/fleet/events") { _, _ in
            try await answer {
                guard let operation = await fleet.operation else {
                    throw WebError(.notFound, "no rollout has run on this server yet")
                }
                // After the first, whole, message each carries only the rows that changed.
                return Self.eventStream(await operation.subscribe(), event: "fleet") { snapshot, previous in
                    FleetSnapshot.Update(snapshot, after: previous)
                }
            }
        }
        router.get("/api/fleet/kept/list") { _, _ in
            try await answer {
                let state = try keptState()
                let rollouts = try await state.list().map { listing in
                    KeptRollouts.Rollout(
                        id: listing.rollout.id,
                        file: listing.rollout.file,
                        mode: listing.rollout.mode,
                        versions: listing.rollout.versions,
                        started: ISO8601DateFormatter().string(from: listing.started),
                        devices: listing.counts.isEmpty ? "no devices" : DeviceRecord.Status.countsLine(listing.counts)
                    )
                }
                return try Self.json(KeptRollouts(state: state.name, rollouts: rollouts))
            }
        }
        router.get("/api/fleet/kept") { request, _ in
            try await answer {
                let state = try keptState()
                let rollout = request.uri.queryParameters["rollout"].map(String.init).flatMap { $0.isEmpty ? nil : $0 }
                // A state without the rollout, or one that cannot be read, is said as
                // `mcumgr fleet status` says it.
                let lines = try await state.status(rollout)
                return try Self.json(KeptRollout(state: state.name, lines: lines))
            }
        }
        router.post("/api/fleet/halt") { _, _ in
            try await answer {
                guard let operation = await fleet.operation, await operation.isRunning else {
                    throw WebError(.conflict, "no rollout runs")
                }
                await operation.halt()
                return try Self.json(FleetState(rollout: await operation.current))
            }
        }
    }

    /// The state of `mcumgr ui --state`, or the one line that says how to give one.
    private func keptState() throws -> WebEnvironment.RolloutState {
        guard let state = environment.rolloutState else {
            throw WebError(
                .notFound,
                "this server keeps its rollouts in a temporary folder of its own; start mcumgr ui with "
                    + "--state FILE or --state postgres://… to see the rollouts kept there, other hosts' too"
            )
        }
        return state
    }

    /// Checks the form, then starts the rollout unless one runs.
    private func startFleet(_ body: StartFleet) async throws -> FleetOperation {
        let inventory = try Self.inventory(body.inventory)
        let mode = try Self.mode(body.mode)
        let policy = try Self.policy(body)
        let worker = try Self.worker(body.worker)
        let entry = try await firmware.entry(body.firmware)
        let environment = self.environment
        let fleetUpgrade = FleetUpgrade(
            policy: policy,
            configuration: FirmwareUpgrade.Configuration(mode: mode),
            clientConfiguration: environment.clientConfiguration,
            worker: worker,
            retryFailed: body.retryFailed ?? false,
            makeTransport: { device in try environment.connect(device.url) }
        )
        return try await fleet.start { path in
            let store: any RolloutStore
            do {
                if let state = environment.rolloutState {
                    store = try await state.open()
                } else {
                    store = try await SQLiteRolloutStore(path: path)
                }
            } catch {
                throw WebError(.internalServerError, "the rollout's state: \(environment.describe(error))")
            }
            let run = fleetUpgrade.run(entry.package, file: entry.name, inventory: inventory, store: store)
            let operation = FleetOperation(
                run: run,
                snapshot: FleetSnapshot(file: entry.name, mode: mode.rawValue, policy: policy, inventory: inventory)
            )
            await operation.start(closing: store, describe: environment.describe)
            return operation
        }
    }

    /// The inventory, parsed by the library: its errors are its one-line messages.
    static func inventory(_ text: String) throws -> Inventory {
        guard text.utf8.count <= inventoryLimit else {
            throw WebError(.contentTooLarge, "Inventory: larger than the \(size(inventoryLimit)) limit")
        }
        let inventory: Inventory
        do {
            inventory = try Inventory(parsing: text)
        } catch {
            throw WebError(.badRequest, "Inventory: \(error)")
        }
        guard !inventory.devices.isEmpty else { throw WebError(.badRequest, "Inventory: lists no device") }
        guard inventory.devices.count <= inventoryDevices else {
            throw WebError(
                .badRequest,
                "Inventory: \(inventory.devices.count) devices; the page runs at most \(inventoryDevices)"
            )
        }
        return inventory
    }

    static func mode(_ text: String?) throws -> FirmwareUpgrade.Mode {
        let modeText = text ?? FirmwareUpgrade.Mode.confirmOnly.rawValue
        guard let mode = FirmwareUpgrade.Mode(rawValue: modeText) else {
            let modes = FirmwareUpgrade.Mode.allCases.map(\.rawValue).joined(separator: ", ")
            throw WebError(.badRequest, "Mode: '\(modeText)' is not one of \(modes)")
        }
        return mode
    }

    /// The policy, with the command line's ranges and the library's parsers.
    static func policy(_ body: StartFleet) throws -> RolloutPolicy {
        let canary = body.canary ?? 0
        guard (0...inventoryDevices).contains(canary) else {
            throw WebError(.badRequest, "Canary: \(canary) is not a number from 0 to \(inventoryDevices)")
        }
        let parallel = body.parallel ?? 8
        guard (1...1024).contains(parallel) else {
            throw WebError(.badRequest, "Parallel: \(parallel) is not a number from 1 to 1024")
        }
        let linkRetries = body.linkRetries ?? 2
        guard (0...100).contains(linkRetries) else {
            throw WebError(.badRequest, "Link retries: \(linkRetries) is not a number from 0 to 100")
        }
        let blePerAdapter = body.blePerAdapter ?? 1
        guard (1...64).contains(blePerAdapter) else {
            throw WebError(.badRequest, "BLE per adapter: \(blePerAdapter) is not a number from 1 to 64")
        }
        let waves: [RolloutPolicy.Share]
        do {
            waves = try RolloutPolicy.waves(parsing: body.waves ?? "100%")
        } catch {
            throw WebError(.badRequest, "Waves: \(error)")
        }
        var maxFailures: RolloutPolicy.Share?
        if let text = body.maxFailures?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            do {
                maxFailures = try RolloutPolicy.Share(parsing: text)
            } catch {
                throw WebError(.badRequest, "Failure budget: \(error)")
            }
        }
        return RolloutPolicy(
            canary: canary,
            waves: waves,
            maxFailures: maxFailures,
            parallel: parallel,
            bleConnectionsPerAdapter: blePerAdapter,
            linkRetries: linkRetries
        )
    }

    /// The worker's name: what `host=` labels of a shared inventory match (the host name when
    /// empty). One line: it is stored and shown in other hosts' tables.
    static func worker(_ text: String?) throws(WebError) -> String {
        let name = text?.trimmingCharacters(in: .whitespaces) ?? ""
        guard !name.isEmpty else { return ProcessInfo.processInfo.hostName }
        guard name.count <= 64, !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control })
        else {
            throw WebError(.badRequest, "Worker: a name of up to 64 characters on one line")
        }
        return name
    }
}
