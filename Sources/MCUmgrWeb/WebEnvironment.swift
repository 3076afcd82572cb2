import Foundation
import MCUboot
import MCUmgr
import MCUmgrConnect
import MCUmgrDFU
import MCUmgrFleet
import SMPLink

/// What the server needs from its host that this module does not hold: how to reach a device
/// (the command serves `sim://` in-process, where the simulator is linked), the saved profiles
/// (`mcumgr conn add` stores them), and the command line's words for errors, plans, results and
/// image files — so the page says exactly what `mcumgr` says.
public struct WebEnvironment: Sendable {
    /// A transport for a connection URL.
    public var connect: @Sendable (ConnectionURL) throws -> any SMPTransport
    /// The saved profiles, name and URL, sorted by name.
    public var profiles: @Sendable () throws -> [(name: String, url: String)]
    /// The URLs used most recently, most recent first, as saved by ``saveRecent``.
    public var loadRecent: @Sendable () -> [String]
    /// Keeps the URLs used most recently for the next run (a failure to save is not an error:
    /// the list is a convenience).
    public var saveRecent: @Sendable ([String]) -> Void
    /// The paths a device's Files screen used before, most recent first, by connection URL, as
    /// saved by ``savePaths``.
    public var loadPaths: @Sendable (String) -> [String]
    /// Keeps a device's paths for the next run (a failure to save is not an error).
    public var savePaths: @Sendable (String, [String]) -> Void
    /// One line for an error, as the command line prints it.
    public var describe: @Sendable (any Error) -> String
    /// An upgrade's plan, as `mcumgr upgrade` prints it.
    public var planLines: @Sendable (FirmwareUpgradePlan) -> [String]
    /// A finished upgrade's verified result, as `mcumgr upgrade` prints it.
    /// Parameters: the summary, the file name, the connection URL.
    public var resultLines: @Sendable (FirmwareUpgrade.Summary, String, String) -> [String]
    /// A firmware file, as `mcumgr image info` prints it. Parameters: the package, its file name.
    public var packageLines: @Sendable (FirmwarePackage, String) -> [String]
    /// The client settings (timeout, retries) of every connection.
    public var clientConfiguration: SMPClient.Configuration
    /// Where rollouts are kept when the server was given a state (`mcumgr ui --state`), or `nil`:
    /// each server then keeps its rollouts in a temporary folder of its own.
    public var rolloutState: RolloutState?

    /// A rollout state several processes (and, through PostgreSQL, hosts) can run and read.
    public struct RolloutState: Sendable {
        /// The state as people named it (a file, or a database without its password).
        public var name: String
        /// Opens it for a rollout of this server.
        public var open: @Sendable () async throws -> any RolloutStore
        /// A rollout kept there (the one named, or the last one run), as `mcumgr fleet status`
        /// prints it: whoever runs it, this server, another process or another host.
        public var status: @Sendable (_ rollout: String?) async throws -> [String]
        /// Every rollout kept there, the last one started first (`mcumgr fleet status --list`).
        public var list: @Sendable () async throws -> [RolloutListing]

        /// Creates one.
        /// - Parameters:
        ///   - name: how to name it to people.
        ///   - open: opens it for a rollout.
        ///   - status: a kept rollout's lines.
        ///   - list: the rollouts kept there.
        public init(
            name: String,
            open: @escaping @Sendable () async throws -> any RolloutStore,
            status: @escaping @Sendable (_ rollout: String?) async throws -> [String],
            list: @escaping @Sendable () async throws -> [RolloutListing]
        ) {
            self.name = name
            self.open = open
            self.status = status
            self.list = list
        }
    }

    /// Scans for Bluetooth LE devices that advertise the SMP service, or `nil` where this host
    /// cannot (no BlueZ). Parameters: the adapter (`hci0`; `nil`: the first), how long.
    public var scanBluetooth: (@Sendable (String?, Duration) async throws -> [BluetoothDevice])?

    /// A device a Bluetooth scan saw.
    public struct BluetoothDevice: Sendable, Hashable {
        /// Its advertised name, if any.
        public var name: String?
        /// Its address.
        public var address: String
        /// The signal strength of its last advertisement, if known.
        public var rssi: Int?
        /// The adapter that saw it.
        public var adapter: String
        /// Whether this host is connected to it.
        public var connected: Bool

        /// Creates one.
        /// - Parameters:
        ///   - name: its name.
        ///   - address: its address.
        ///   - rssi: its signal strength.
        ///   - adapter: the adapter that saw it.
        ///   - connected: whether this host is connected to it.
        public init(name: String?, address: String, rssi: Int?, adapter: String, connected: Bool) {
            self.name = name
            self.address = address
            self.rssi = rssi
            self.adapter = adapter
            self.connected = connected
        }
    }

    /// Creates an environment.
    /// - Parameters:
    ///   - connect: a transport for a URL; the default serves every scheme `MCUmgrConnect` knows.
    ///   - profiles: the saved profiles; the default has none.
    ///   - loadRecent: the URLs used before; the default has none.
    ///   - saveRecent: keeps them; the default keeps them for this run only.
    ///   - loadPaths: a device's Files paths used before; the default has none.
    ///   - savePaths: keeps them; the default keeps them for this run only.
    ///   - describe: one line for an error.
    ///   - planLines: a plan's lines.
    ///   - resultLines: a result's lines.
    ///   - packageLines: a firmware file's lines.
    ///   - clientConfiguration: timeouts and retries.
    ///   - scanBluetooth: a Bluetooth LE scan; the default has none.
    ///   - rolloutState: where rollouts are kept; the default: a temporary folder per server.
    public init(
        connect: @escaping @Sendable (ConnectionURL) throws -> any SMPTransport = { try $0.makeTransport() },
        profiles: @escaping @Sendable () throws -> [(name: String, url: String)] = { [] },
        loadRecent: @escaping @Sendable () -> [String] = { [] },
        saveRecent: @escaping @Sendable ([String]) -> Void = { _ in },
        loadPaths: @escaping @Sendable (String) -> [String] = { _ in [] },
        savePaths: @escaping @Sendable (String, [String]) -> Void = { _, _ in },
        describe: @escaping @Sendable (any Error) -> String = { "\($0)" },
        planLines: @escaping @Sendable (FirmwareUpgradePlan) -> [String] = { plan in
            plan.images.map { "image \($0.imageIndex) \($0.version ?? "?"): \($0.action) — \($0.reason)" }
        },
        resultLines: @escaping @Sendable (FirmwareUpgrade.Summary, String, String) -> [String] = { summary, file, _ in
            ["\(file): \(summary.isUpToDate ? "already on the device; nothing to do" : "upgraded")"]
        },
        packageLines: @escaping @Sendable (FirmwarePackage, String) -> [String] = { package, name in
            ["\(name): \(package.format)"]
                + package.images.map { "image \($0.imageIndex): version \($0.version.map { "\($0)" } ?? "?")" }
        },
        clientConfiguration: SMPClient.Configuration = .init(),
        scanBluetooth: (@Sendable (String?, Duration) async throws -> [BluetoothDevice])? = nil,
        rolloutState: RolloutState? = nil
    ) {
        self.connect = connect
        self.profiles = profiles
        self.loadRecent = loadRecent
        self.saveRecent = saveRecent
        self.loadPaths = loadPaths
        self.savePaths = savePaths
        self.describe = describe
        self.planLines = planLines
        self.resultLines = resultLines
        self.packageLines = packageLines
        self.clientConfiguration = clientConfiguration
        self.scanBluetooth = scanBluetooth
        self.rolloutState = rolloutState
    }
}
