import Foundation
import SMPBytes
import SMPDBus

/// bluezoo (PyPI, an independent mock of BlueZ's D-Bus API) on a private dbus-daemon, with two
/// adapters that see and connect to each other: `hci0` (the central's) and `hci1` (the
/// peripheral's). Each scenario gets its own: bluezoo 1.0.2 cannot connect twice in one process
/// and announces a device once per scan (see docs/BLE.md).
///
/// ``restart()`` stops the bluezoo process and starts a new one on the same bus: `org.bluez`
/// leaves the bus and comes back, as when bluetoothd restarts — the one link drop bluezoo shows
/// both sides. ``stop()`` ends both processes (tests call it in `defer`, so they end on failure
/// too).
public final class Bluezoo: Sendable {
    /// The bus.
    public let bus: DBusTestBus
    /// The adapters' addresses: `hci0`, `hci1`.
    public static let adapterAddresses = ["00:AA:01:00:00:01", "00:AA:01:00:00:02"]
    private let process: Locked<RunningProcess?>
    private let powered: Bool
    private let denied: [String]

    /// Whether dbus-daemon and bluezoo are here (always `true` in CI, where they must be).
    public static var available: Bool { DBusTestBus.available && (Peers.isCI || Peers.path(of: "bluezoo") != nil) }

    /// The reason shown when a test skips for want of them.
    public static let missing = "needs dbus-daemon and bluezoo (apt-get install dbus-daemon; scripts/setup-peers.sh)"

    private init(bus: DBusTestBus, powered: Bool, denied: [String]) {
        self.bus = bus
        self.powered = powered
        self.denied = denied
        process = Locked(nil)
    }

    /// The bus address as our code takes it.
    public var address: DBusAddress {
        get throws { try DBusAddress(bus.address) }
    }

    /// Starts a bus and bluezoo on it, and waits until the adapters are there (and powered, unless
    /// `powered` is `false`).
    /// - Parameters:
    ///   - adapters: how many adapters (0, 1 or 2).
    ///   - powered: whether bluezoo powers them on (`--auto-enable`).
    ///   - denying: destinations the bus policy refuses.
    public static func start(adapters: Int = 2, powered: Bool = true, denying: [String] = []) async throws -> Bluezoo {
        let bus = try await DBusTestBus.start(denying: denying)
        let zoo = Bluezoo(bus: bus, powered: powered, denied: denying)
        do {
            try await zoo.launch(adapters: adapters)
        } catch {
            zoo.stop()
            throw error
        }
        return zoo
    }

    private func launch(adapters: Int) async throws {
        guard let bluezoo = Peers.path(of: "bluezoo") else {
            throw PeerError(message: "bluezoo is not installed; run scripts/setup-peers.sh")
        }
        var arguments = [
            "DBUS_SYSTEM_BUS_ADDRESS=\(bus.address)", "PYTHONUNBUFFERED=1", bluezoo, "--scan-interval", "1",
        ]
        if powered { arguments.append("--auto-enable") }
        for address in Self.adapterAddresses.prefix(adapters) { arguments += ["-a", address] }
        let child = RunningProcess(
            "/usr/bin/nice",
            ["-n", "10", "/usr/bin/env"] + arguments,
            timeout: DBusTestBus.lifetime
        )
        process.withLock { $0 = child }
        try await waitForAdapters(adapters)
    }

    /// Waits until BlueZ's name is owned and its adapters are listed (powered, if asked).
    private func waitForAdapters(_ count: Int) async throws {
        if !denied.isEmpty {
            // The policy keeps us from asking bluezoo: its log says when the adapters are there.
            let last = "Adding adapter[\(count - 1)]"
            for _ in 0..<1200 where !log.contains(count == 0 ? "Initializing" : last) {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await Task.sleep(for: .milliseconds(200))
            return
        }
        let connection = try await DBusConnection.connect(to: try address)
        defer { connection.close() }
        // Counted in pauses, not on the clock: a stalled machine costs one pause, not the wait.
        for _ in 0..<1200 {
            if let reply = try? await connection.call(
                destination: "org.bluez",
                path: .root,
                interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects",
                timeout: .seconds(5)
            ), let objects = reply.message.body.first?.stringDictionary {
                let adapters = objects.values.compactMap {
                    $0.stringDictionary?["org.bluez.Adapter1"]?.stringDictionary
                }
                if adapters.count == count, !powered || adapters.allSatisfy({ $0["Powered"]?.boolValue == true }) {
                    return
                }
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw PeerError(
            message:
                "bluezoo did not list \(count) adapters within 60 s: \(process.withLock { $0 }?.output.stderr ?? "")"
        )
    }

    /// Stops bluezoo and starts it again on the same bus, with the same adapters.
    public func restart(adapters: Int = 2) async throws {
        if let old = process.withLock({ $0 }) {
            old.stop()
            _ = try? await old.finished()
        }
        try await launch(adapters: adapters)
    }

    /// What bluezoo logged so far (for failure messages).
    public var log: String { process.withLock { $0 }?.output.stderr ?? "" }

    /// Stops bluezoo and the bus.
    public func stop() {
        process.withLock { $0 }?.stop()
        bus.stop()
    }
}
