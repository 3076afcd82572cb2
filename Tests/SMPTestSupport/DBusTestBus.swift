import Foundation

/// A private `dbus-daemon` for a test: its own socket in a scratch folder, a permissive policy
/// (or one denying a destination), and dbus-daemon's system-bus reply limit (128 pending calls
/// per connection). Its `auth_timeout` is the bus's lifetime: with dbus-daemon's default (30 s
/// by its own clock) the bus closed connections of a fresh-clone CI run that were stalled between
/// authenticating and `Hello` at the loaded start of the suite ("the bus closed the
/// connection"), and it closed one here within a millisecond, logging 30 s elapsed, after the
/// virtual machine's clock jumped. Stop it with ``stop()`` (tests do so in `defer`, so it ends on failure too);
/// it is killed after ``lifetime`` whatever happens.
public final class DBusTestBus: Sendable {
    /// The bus address, for `DBUS_SYSTEM_BUS_ADDRESS`.
    public let address: String
    /// The scratch folder holding the socket and the configuration.
    public let directory: URL
    private let process: RunningProcess

    /// How long a test bus may live: far beyond any test, so only a hung test reaches it.
    public static let lifetime: Duration = .seconds(900)

    /// Whether `dbus-daemon` can be run here (always `true` in CI, where it must be).
    public static var available: Bool { Peers.isCI || Peers.path(of: "dbus-daemon") != nil }

    private init(address: String, directory: URL, process: RunningProcess) {
        self.address = address
        self.directory = directory
        self.process = process
    }

    /// Starts a bus.
    /// - Parameter denying: destinations the policy refuses to send to (a D-Bus policy denial).
    /// - Returns: the running bus.
    /// - Throws: ``PeerError`` when `dbus-daemon` is missing or does not start.
    public static func start(denying: [String] = []) async throws -> DBusTestBus {
        guard let daemon = Peers.path(of: "dbus-daemon") else {
            throw PeerError(message: "dbus-daemon is not installed (apt-get install dbus-daemon)")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-bus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let socket = directory.appendingPathComponent("bus").path
        let denials = denying.map { "    <deny send_destination=\"\($0)\"/>" }.joined(separator: "\n")
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>mcumgr-test</type>
              <listen>unix:path=\(socket)</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow user="*"/>
                <allow own="*"/>
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
            \(denials)
              </policy>
              <limit name="max_replies_per_connection">128</limit>
              <limit name="reply_timeout">60000</limit>
              <limit name="auth_timeout">\(lifetime.components.seconds * 1000)</limit>
            </busconfig>
            """
        let configFile = directory.appendingPathComponent("bus.conf")
        try config.write(to: configFile, atomically: true, encoding: .utf8)
        // Niced, as every process the Bluetooth tests start: the tests beside them that bound
        // their waits tightly keep the cores first.
        let process = RunningProcess(
            "/usr/bin/nice",
            ["-n", "10", daemon, "--config-file=\(configFile.path)", "--nofork", "--print-address=1", "--nopidfile"],
            timeout: lifetime
        )
        let printed = try await process.waitForOutput(timeout: .seconds(60)) { stdout, _ in stdout.contains("\n") }
        guard printed, let line = process.output.stdout.split(separator: "\n").first else {
            process.stop()
            throw PeerError(message: "dbus-daemon did not start: \(process.output.stderr)")
        }
        return DBusTestBus(address: String(line), directory: directory, process: process)
    }

    /// Stops the daemon and removes its folder. What the daemon logged — e.g. why it closed a
    /// connection — is printed, so that a test failing with "the bus closed the connection" has
    /// the daemon's side in the run's log (a fresh-clone CI run saw such a failure 0.6 s into a
    /// test, with `auth_timeout` far away, and nothing said why).
    public func stop() {
        let noise = "Failed to set fd limit"
        for line in process.output.stderr.split(separator: "\n") where !line.contains(noise) {
            print("dbus-daemon of a test bus (\(directory.lastPathComponent)): \(line)")
        }
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Waits until the daemon has exited (after ``stop()``).
    public func finished() async {
        _ = try? await process.finished()
    }
}
