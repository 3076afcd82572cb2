import Foundation

/// Bluetooth LE without a radio, through Bumble (PyPI `bumble`, Google's independent Python
/// stack): virtual controllers on one link, each served as HCI H4 over TCP on 127.0.0.1
/// (`Tests/Bumble/rig.py`). A host that connects to a chip's port gets a fresh controller; when
/// its socket closes, its links end toward their peers with reason 0x08, as when a device loses
/// power (docs: shared reference hci-bumble.md).
///
/// ``stop()`` ends the rig (tests call it in `defer`); the rig also ends by itself when the test
/// process is gone.
public final class BumbleRig: Sendable {
    /// The chips' TCP ports on 127.0.0.1, in order.
    public let ports: [Int]
    private let process: RunningProcess

    /// The reason shown when a test skips for want of Bumble (never in CI).
    public static let missing = "needs bumble (scripts/setup-peers.sh)"

    private init(ports: [Int], process: RunningProcess) {
        self.ports = ports
        self.process = process
    }

    /// An HCI transport spec for a chip, as Bumble's `open_transport` takes it.
    /// - Parameter chip: the chip's index (0-based).
    public func hci(_ chip: Int) -> String { "tcp-client:127.0.0.1:\(ports[chip])" }

    /// What the rig logged (one line per host connected and gone), for a failing test's message.
    public var log: String { process.output.stderr }

    /// Starts a rig.
    /// - Parameter chips: how many chips (1–32).
    /// - Returns: the rig, every port listening.
    /// - Throws: ``PeerError`` when Python or Bumble is missing, or the rig ended before it listened.
    public static func start(chips: Int = 2) async throws -> BumbleRig {
        let process = try BumbleScript.start("rig.py", ["--chips", "\(chips)"])
        guard let line = try await BumbleScript.firstJSONLine(of: process),
            let ports = line["ports"] as? [Int], ports.count == chips
        else {
            process.stop()
            throw PeerError(message: "rig.py did not print its ports: \(process.output.stderr)")
        }
        return BumbleRig(ports: ports, process: process)
    }

    /// Ends the rig: every chip's host sees its socket close.
    public func stop() { process.stop() }
}

/// An SMP peripheral run by Bumble's own LE host on a chip of a ``BumbleRig``
/// (`Tests/Bumble/smp_peripheral.py`): it advertises `name` with the SMP service, and forwards
/// every frame a central writes to an SMP server over UDP on 127.0.0.1, notifying the answers.
public final class BumblePeripheral: Sendable {
    /// The name it advertises.
    public let name: String
    private let process: RunningProcess

    private init(name: String, process: RunningProcess) {
        self.name = name
        self.process = process
    }

    /// One line per connection and disconnection (`peripheral: disconnected, reason 0x08`).
    public var log: String { process.output.stderr }

    /// Starts a peripheral and waits until it advertises.
    /// - Parameters:
    ///   - rig: the rig.
    ///   - chip: the chip it uses (0-based).
    ///   - name: the name it advertises (at most 8 characters: legacy advertising data holds the
    ///     flags, the name and the 128-bit service UUID in 31 bytes).
    ///   - udpPort: the SMP server's UDP port on 127.0.0.1.
    /// - Returns: the peripheral.
    /// - Throws: ``PeerError`` when it ended before it advertised.
    public static func start(on rig: BumbleRig, chip: Int, name: String, udpPort: Int) async throws
        -> BumblePeripheral
    {
        let process = try BumbleScript.start(
            "smp_peripheral.py",
            ["--hci", rig.hci(chip), "--name", name, "--udp", "\(udpPort)"]
        )
        guard let line = try await BumbleScript.firstJSONLine(of: process),
            line["advertising"] as? String == name
        else {
            process.stop()
            throw PeerError(message: "smp_peripheral.py did not advertise: \(process.output.stderr)")
        }
        return BumblePeripheral(name: name, process: process)
    }

    /// Ends the peripheral: its host's socket closes, so the rig ends its link (reason 0x08).
    public func stop() { process.stop() }
}

/// Starting the scripts of `Tests/Bumble` with the peers' Python.
enum BumbleScript {
    static func start(_ script: String, _ arguments: [String]) throws -> RunningProcess {
        guard let python = Peers.python else {
            throw PeerError(message: "no Python with the peers; run scripts/setup-peers.sh")
        }
        let path = Peers.packageRoot.appendingPathComponent("Tests/Bumble/\(script)").path
        return RunningProcess(python, ["-u", path] + arguments, timeout: Peers.processTimeout)
    }

    /// The first line of standard output as a JSON object, once it is there; `nil` when the
    /// process ended without one. Bounded by the process's end, not a clock: a starved machine
    /// may take long to start Python and Bumble.
    static func firstJSONLine(of process: RunningProcess) async throws -> [String: Any]? {
        let printed = try await process.waitForOutput { stdout, _ in stdout.contains("\n") }
        guard printed, let line = process.output.stdout.split(separator: "\n").first else { return nil }
        return try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
    }
}
