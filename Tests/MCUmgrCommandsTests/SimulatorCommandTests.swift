import ArgumentParser
import Foundation
import SMPBytes
import SMPCore
import SMPPOSIX
import SMPSimulator
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

@Suite("SimulatorCommand")
struct SimulatorCommandTests {
    @Test(
        "endpoints: HOST:PORT, [IPv6]:PORT, HOST alone, :PORT",
        arguments: [
            ("127.0.0.1:1337", "127.0.0.1", 1337 as UInt16), ("[::1]:4000", "::1", 4000),
            ("localhost", "localhost", 1337),
            (":0", "127.0.0.1", 0), ("0.0.0.0:9", "0.0.0.0", 9), ("[::]", "::", 1337),
        ]
    )
    func endpoints(text: String, host: String, port: UInt16) throws {
        let parsed = try SimulatorCommand.parseEndpoint(text)
        #expect(parsed.host == host)
        #expect(parsed.port == port)
    }

    @Test(
        "bad options are refused before anything is served",
        arguments: [
            ["--udp", "[::1:80"], ["--udp", "host:99999"], ["--framing", "hdlc", "--pty"], ["--mode", "sideways"],
            ["--images", "0"], ["--baud", "5"], ["--slot-size", "big"], ["--zephyr", "2.7"],
        ]
    )
    func validation(arguments: [String]) {
        #expect(throws: (any Error).self) { try SimulatorCommand.parse(arguments) }
    }

    /// What the simulator cannot serve is refused at start-up, in one line, with a non-zero
    /// status: a key file it cannot read (66) or that holds no key (65), an address another server
    /// holds (never two servers sharing a port); state folders in `stateFolderRefusals`.
    @Test("start-up refuses what it cannot serve")
    func startUpRefusals() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sim-start-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let notAKey = folder.appendingPathComponent("key.pem")
        try Data("hello".utf8).write(to: notAKey)
        let held = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        defer { held.close() }
        let cases: [(arguments: [String], status: Int32, message: String)] = [
            (["--key", "/no/such/key.pem"], 66, "error: cannot read /no/such/key.pem: No such file or directory"),
            (["--key", notAKey.path], 65, "error: --key \(notAKey.path): "),
            (["--udp", "127.0.0.1:\(held.localAddress.port)"], 1, "error: cannot serve: bind 127.0.0.1:"),
        ]
        for (arguments, status, message) in cases {
            let result = await MCUmgrCommand.run(arguments: ["simulator"] + arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix(message), "\(arguments): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
        }
    }

    /// A state folder is refused the same way whether `mcumgr simulator` or a `sim://` URL names
    /// it: one that cannot be a folder is a local failure (1), damaged saved flash is bad input
    /// data (65, with the way out); neither is a usage error.
    @Test("a state folder is refused with the same status by simulator --state-dir and sim://")
    func stateFolderRefusals() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("sim-state-\(UUID().uuidString)")
        let damaged = folder.appendingPathComponent("damaged")
        try FileManager.default.createDirectory(at: damaged, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try Data("{\"mode\":".utf8).write(to: damaged.appendingPathComponent("flash.json"))
        let aFile = folder.appendingPathComponent("file")
        try Data().write(to: aFile)
        let cases: [(folder: URL, status: Int32, message: String)] = [
            (aFile, 1, "state folder \(aFile.path) is a file, not a folder"),
            (damaged, 65, "state folder \(damaged.path): the saved flash is damaged: flash.json cannot be read"),
        ]
        for (folder, status, message) in cases {
            let served = await MCUmgrCommand.run(arguments: ["simulator", "--state-dir", folder.path])
            let used = await MCUmgrCommand.run(arguments: [
                "--conn", "sim://?state_dir=\(folder.path)", "os", "echo", "hi",
            ])
            for (result, option) in [(served, "--state-dir"), (used, "sim://?state_dir")] {
                #expect(result.status == status, "\(option): \(result.stderr)")
                #expect(result.stderr.hasPrefix("error: \(option): \(message)"), "\(result.stderr)")
                #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
                #expect(result.stdout.isEmpty)
            }
        }
        #expect(try LocalFile.read(damaged.appendingPathComponent("flash.json")) == Data("{\"mode\":".utf8))
    }

    @Test(
        "--ble options are checked before anything starts",
        arguments: [
            (["simulator", "Zephyr"], "error: unexpected argument 'Zephyr': a name is given with --ble NAME\n"),
            (["simulator", "--adapter", "hci1"], "error: --adapter goes with --ble\n"),
            (["simulator", "--ble-acquire"], "error: --ble-acquire goes with --ble\n"),
            (["simulator", "--ble", "--ble-mtu", "600"], "error: --ble-mtu must be 23-517\n"),
            (
                ["simulator", "--ble", String(repeating: "n", count: 30)],
                "error: the --ble name must be 1-29 bytes (it is advertised)\n"
            ),
        ]
    )
    func bleOptionsAreChecked(arguments: [String], message: String) async {
        let result = await MCUmgrCommand.run(arguments: arguments)
        #expect(result.status == 64)
        #expect(result.stderr == message)
    }

    @Test("--ble alone serves Bluetooth LE only (no default UDP) with a BLE-sized buffer")
    func bleAloneServesNoUDP() throws {
        let command = try SimulatorCommand.parse(["--ble", "Sim"])
        #expect(try command.deviceConfiguration(readingKey: false).bufferSize == 384)
    }

    #if os(Linux)
        @Test(
            "--ble without BlueZ on the bus fails with one line naming what to start",
            .requiring(DBusTestBus.available, "needs dbus-daemon")
        )
        func bleWithoutBlueZ() async throws {
            let bus = try await DBusTestBus.start()
            defer { bus.stop() }
            setenv("DBUS_SYSTEM_BUS_ADDRESS", bus.address, 1)
            defer { unsetenv("DBUS_SYSTEM_BUS_ADDRESS") }
            let result = await MCUmgrCommand.run(arguments: ["simulator", "--ble"])
            #expect(result.status != 0)
            #expect(result.stderr.contains("BlueZ (org.bluez) is not running"), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
        }
    #endif

    @Test("serves UDP on the given address and prints one line per endpoint")
    func servesUDP() async throws {
        let command = try SimulatorCommand.parse(["--udp", "127.0.0.1:0", "--images", "2", "--mode", "overwrite"])
        let running = try command.start()
        defer { Task { await running.stop() } }
        #expect(running.endpoints.count == 1)
        let endpoint = try #require(running.endpoints.first)
        #expect(endpoint.hasPrefix("udp://127.0.0.1:"))
        let port = try #require(UInt16(endpoint.split(separator: ":").last ?? ""))
        #expect(port != 0)
        #expect(running.device.configuration.imageCount == 2)
        #expect(running.device.configuration.bootloaderMode == .overwriteOnly)
        #expect(running.device.configuration.bufferSize == 2048)

        let client = try UDPSocket(connectingTo: "127.0.0.1", port: port)
        defer { client.close() }
        try client.send(SMPFrame.request(OSManagement.Echo(text: "cli"), sequence: 3).bytes)
        let reply = try await RealIO.poll(timeout: .seconds(30)) {
            try client.receive(timeout: .milliseconds(1))?.bytes
        }
        let frame = try SMPFrame(parsing: try #require(reply))
        #expect(try frame.decodeResponse(to: OSManagement.Echo.self).text == "cli")
        await running.stop()
    }

    @Test("serves a pseudo-terminal with 384-byte buffers and prints serial://PATH")
    func servesPTY() async throws {
        let command = try SimulatorCommand.parse(["--pty", "--framing", "raw", "--baud", "0"])
        let running = try command.start()
        #expect(running.endpoints.count == 1)
        let endpoint = try #require(running.endpoints.first)
        #expect(endpoint.hasPrefix("serial:///dev/"))
        #expect(endpoint.hasSuffix("?framing=raw"))
        #expect(running.device.configuration.bufferSize == 384)
        await running.stop()
    }

    @Test("--json announces each endpoint as one JSON object per line")
    func jsonAnnouncement() async throws {
        let command = try SimulatorCommand.parse(["--udp", "127.0.0.1:0", "--udp", "127.0.0.1:0", "--json"])
        let running = try command.start()
        let lines = LinesBox()
        Console.$output.withValue(Console.Sink(write: lines.append)) {
            command.announce(running)
        }
        #expect(lines.lines.count == 2)
        #expect(lines.lines.allSatisfy { $0.hasPrefix("{\"endpoint\":\"udp://127.0.0.1:") })
        await running.stop()
    }

    @Test("an address that cannot be bound is reported, not crashed on")
    func unbindableAddress() throws {
        // 192.0.2.0/24 is TEST-NET-1: no interface here has it.
        let command = try SimulatorCommand.parse(["--udp", "192.0.2.1:9"])
        #expect(throws: (any Error).self) { try command.start() }
    }
}

private final class LinesBox: Sendable {
    private let stored = Locked<[String]>([])
    func append(_ line: String) { stored.withLock { $0.append(line) } }
    var lines: [String] { stored.withLock { $0 } }
}
