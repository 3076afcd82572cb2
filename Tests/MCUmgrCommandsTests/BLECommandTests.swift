import Foundation
import MCUboot
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

/// The Bluetooth commands as a person runs them (docs/BLE.md, "A session to repeat"): the built
/// `mcumgr` in child processes, on a bluezoo bus named by `DBUS_SYSTEM_BUS_ADDRESS` — the only
/// way the command line is told of a bus, so the tests set it in the children's environment, not
/// in this process that other tests share. The library paths under these commands have their own
/// tests (BlueZSuites); these prove the commands wire them up.
@Suite(.requiring(Bluezoo.available, Bluezoo.missing))
struct BLECommandTests {
    /// Bounds far above a real run: only a hang reaches them.
    static let processBound: Duration = .seconds(600)
    static let outputBound: Duration = .seconds(60)

    /// `mcumgr …` with the bus of `zoo` as the system bus.
    static func mcumgr(_ arguments: [String], zoo: Bluezoo) throws -> RunningProcess {
        let environment = ["DBUS_SYSTEM_BUS_ADDRESS=\(zoo.bus.address)"]
        return RunningProcess(
            "/usr/bin/env",
            environment + [try EntryTests.executable()] + arguments,
            timeout: processBound
        )
    }

    /// `mcumgr simulator --ble NAME --adapter hci1`, once its advertisement is registered (it
    /// prints its URL then).
    static func simulator(_ name: String, zoo: Bluezoo) async throws -> RunningProcess {
        let simulator = try mcumgr(["simulator", "--ble", name, "--adapter", "hci1"], zoo: zoo)
        let announced = try await simulator.waitForOutput(timeout: outputBound) { out, _ in out.hasSuffix("\n") }
        try #require(announced, "the simulator printed no URL: \(simulator.output.stderr)")
        #expect(simulator.output.stdout == "ble://\(name)?adapter=hci1\n")
        return simulator
    }

    /// Scans until `name` is listed. A scan lasts its `--timeout`; on a loaded machine bluezoo's
    /// announcement can miss one, so up to ten are run (bounded by count, not by the clock).
    static func scan(for name: String, zoo: Bluezoo, json: Bool) async throws -> String {
        var last = ""
        for _ in 0..<10 {
            let scan = try mcumgr(
                ["ble", "scan", "--adapter", "hci0", "--timeout", "2"] + (json ? ["--json"] : []),
                zoo: zoo
            )
            let result = try await scan.finished()
            #expect(result.status == 0, "\(result.stderr)")
            last = result.stdout
            if last.contains(name) { return last }
        }
        Issue.record("\(name) was not listed in ten scans; the last printed: \(last)")
        return last
    }

    /// The bus going away (its dbus-daemon ended) ends the Bluetooth LE service: the simulator
    /// says so in one line and serves its other endpoints on, rather than run on in silence.
    @Test func theSimulatorSaysWhenItsBusGoesAway() async throws {
        let zoo = try await Bluezoo.start()
        defer { zoo.stop() }
        let simulator = try Self.mcumgr(
            ["simulator", "--ble", "Gone", "--adapter", "hci1", "--udp", "127.0.0.1:0"],
            zoo: zoo
        )
        defer { simulator.stop() }
        let announced = try await simulator.waitForOutput(timeout: Self.outputBound) { out, _ in
            out.contains("ble://Gone")
        }
        try #require(announced, "the simulator printed no URL: \(simulator.output.stderr)")
        let lines = simulator.output.stdout.split(separator: "\n").map(String.init)
        let udp = try #require(lines.first { $0.hasPrefix("udp://") })
        zoo.stop()
        let said = try await simulator.waitForOutput(timeout: Self.outputBound) { _, err in err.contains("\n") }
        #expect(said, "nothing said after the bus went away")
        #expect(
            simulator.output.stderr
                == "simulator: the bus closed the connection; Bluetooth LE is no longer served; still served: \(udp)\n"
        )
        // Still serving UDP.
        let echo = await CLI.run(["--conn", udp, "os", "echo", "still here"])
        #expect(echo.stdout == "still here\n", "\(echo.stderr)")
    }

    /// bluezoo 1.0.2 connects a device once per process (docs/BLE.md): the second command's
    /// connection fails with sd-bus internals, which become a hint saying how to go on.
    @Test func aSecondConnectionThroughOneBluezooGetsAHint() async throws {
        let zoo = try await Bluezoo.start()
        defer { zoo.stop() }
        let simulator = try await Self.simulator("Again", zoo: zoo)
        defer { simulator.stop() }
        let peripheral = try #require(Bluezoo.adapterAddresses.last)
        let url = "ble://Again?adapter=hci0"
        let first = try await Self.mcumgr(["--conn", url, "os", "echo", "one"], zoo: zoo).finished()
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await Self.mcumgr(["--conn", url, "os", "echo", "two"], zoo: zoo).finished()
        #expect(second.status == 2)
        #expect(
            second.stderr
                == "error: connection failed: BlueZ could not connect \(peripheral): bluezoo, the BlueZ mock, cannot "
                + "connect a device it connected before; restart it (kill -HUP the pid of scripts/bluezoo-bus.sh, "
                + "see docs/BLE.md)\n"
        )
    }

    /// The session of docs/BLE.md: the simulator advertises on hci1, `ble scan` on hci0 lists it
    /// (text and JSON), and `upgrade` over `ble://NAME?adapter=hci0` ends with the new image
    /// running and confirmed — through the reset, the dropped link and the reconnection.
    @Test func scanThenUpgradeOverBLE() async throws {
        let zoo = try await Bluezoo.start()
        defer { zoo.stop() }
        let simulator = try await Self.simulator("Zephyr", zoo: zoo)
        defer { simulator.stop() }
        let peripheral = try #require(Bluezoo.adapterAddresses.last)

        let text = try await Self.scan(for: "Zephyr", zoo: zoo, json: false)
        let line = try #require(text.split(separator: "\n").first { $0.hasSuffix("Zephyr") })
        #expect(line.hasPrefix("\(peripheral)  "), "\(line)")
        let json = try CLI.json(try await Self.scan(for: "Zephyr", zoo: zoo, json: true))
        let devices = try #require(json["devices"] as? [[String: Any]])
        let device = try #require(devices.first { $0["name"] as? String == "Zephyr" })
        #expect(device["address"] as? String == peripheral)
        #expect(device["adapter"] as? String == "hci0")
        #expect(device["connected"] as? Bool == false)

        let scratch = Scratch()
        let image = try BLEBenchmark.syntheticImage(size: 24 * 1024, version: (3, 1))
        let digest = try #require(try MCUbootImage(bytes: [UInt8](image)).hash)
        let hash = digest.map { String(format: "%02x", $0) }.joined()
        let file = try scratch.file("app.bin", image)
        let upgrade = try Self.mcumgr(
            [
                "--conn", "ble://Zephyr?adapter=hci0", "--timeout", "30", "upgrade", file, "--mode", "test-and-confirm",
                "--json",
            ],
            zoo: zoo
        )
        let result = try await upgrade.finished()
        #expect(result.status == 0, "\(result.stderr)")
        let completed = try #require(try CLI.jsonLines(result.stdout).last, "\(result.stderr)")
        let after = try #require(completed["after"] as? [[String: Any]], "\(completed)")
        let running = after.first { $0["slot"] as? Int == 0 }
        #expect(running?["hash"] as? String == hash, "\(after)")
        #expect(running?["active"] as? Bool == true)
        #expect(running?["confirmed"] as? Bool == true)
    }

    /// What a person gets wrong first, each in one line on stderr with the link status (2), after
    /// the kind of link failure: an adapter that is not there (the ones that are, named), and a
    /// name nothing advertises.
    @Test func mistakesAreOneLineWithTheWayOut() async throws {
        let zoo = try await Bluezoo.start()
        defer { zoo.stop() }
        let cases: [(arguments: [String], message: String)] = [
            (
                ["ble", "scan", "--adapter", "hci7", "--timeout", "1"],
                "error: unavailable: no Bluetooth adapter hci7; BlueZ has hci0, hci1\n"
            ),
            (
                ["--conn", "ble://Nobody?adapter=hci0", "os", "echo", "hi"],
                "error: connection failed: no SMP device 'Nobody' found within 10 s on hci0; check that it advertises "
                    + "and is in range ('mcumgr ble scan' lists what is)\n"
            ),
        ]
        for (arguments, message) in cases {
            let result = try await Self.mcumgr(arguments, zoo: zoo).finished()
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr == message, "\(arguments)")
            #expect(result.stdout.isEmpty, "\(arguments)")
        }
    }

    /// No bus where `DBUS_SYSTEM_BUS_ADDRESS` points: one line that names the variable, then the
    /// address that could not be reached and why.
    @Test func noBusIsOneLine() async throws {
        let child = RunningProcess(
            "/usr/bin/env",
            ["DBUS_SYSTEM_BUS_ADDRESS=unix:path=/nonexistent/bus", try EntryTests.executable(), "ble", "scan"],
            timeout: Self.processBound
        )
        let result = try await child.finished()
        #expect(result.status == 2, "\(result.stderr)")
        #expect(CLI.lines(result.stderr).count == 1, "\(result.stderr)")
        #expect(
            result.stderr.hasPrefix(
                "error: unavailable: cannot reach the system D-Bus that DBUS_SYSTEM_BUS_ADDRESS names; is that bus running?"
            ),
            "\(result.stderr)"
        )
        #expect(result.stderr.contains("unix:path=/nonexistent/bus"), "\(result.stderr)")
        #expect(result.stderr.contains("No such file or directory"), "\(result.stderr)")
    }
}
