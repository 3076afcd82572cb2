import Foundation
import MCUboot
import SMPCore
import SMPPOSIX
import SMPSimulator
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

/// The Bluetooth commands through our own LE host, as a person runs them: the built `mcumgr` in
/// child processes on the Bumble rig — `mcumgr simulator --ble NAME --hci …` on one controller, a
/// peripheral run by Bumble's own host on a second, and `ble scan --hci` and `--conn
/// ble://NAME?hci=…` on a third.
@Suite(.serialized) struct BLECommandHCITests {
    static let processBound: Duration = .seconds(600)

    static func mcumgr(_ arguments: [String]) throws -> RunningProcess {
        RunningProcess(try EntryTests.executable(), arguments, timeout: processBound)
    }

    /// `mcumgr simulator --ble NAME --hci CONTROLLER`, once it advertises (it prints its URLs then).
    static func simulator(_ name: String, controller: String) async throws -> RunningProcess {
        let simulator = try mcumgr(["simulator", "--ble", name, "--hci", controller, "--udp", "127.0.0.1:0"])
        let announced = try await simulator.waitForOutput { out, _ in out.contains("ble://") && out.hasSuffix("\n") }
        try #require(announced, "the simulator printed no URL: \(simulator.output.stderr)")
        #expect(simulator.output.stdout.contains("ble://\(name)?hci=\(controller)\n"), "\(simulator.output.stdout)")
        return simulator
    }

    /// Scans until every name is listed: a scan lasts its `--timeout`, and a starved machine may
    /// miss an advertiser in one, so up to ten are run (bounded by count, not by the clock).
    static func scan(for names: [String], controller: String) async throws -> String {
        var last = ""
        for _ in 0..<10 {
            let result = try await mcumgr(["ble", "scan", "--hci", controller, "--timeout", "2", "--json"]).finished()
            #expect(result.status == 0, "\(result.stderr)")
            last = result.stdout
            if names.allSatisfy(last.contains) { return last }
        }
        Issue.record("\(names) were not all listed in ten scans; the last printed: \(last)")
        return last
    }

    @Test(Peers.needed("bumble"))
    func scanListsBothPeripheralsAndUpgradeWorksThroughEach() async throws {
        let rig = try await BumbleRig.start(chips: 3)
        defer { rig.stop() }
        let controller = { (chip: Int) in "tcp://127.0.0.1:\(rig.ports[chip])" }
        let ours = try await Self.simulator("sim-cli", controller: controller(0))
        defer { ours.stop() }
        // Bumble's peripheral forwards whole frames over UDP to a device in this process.
        let device = SimulatedDevice(
            configuration: .init(bufferSize: 2475, bufferCount: 4, maximumDatagramSize: 65_507)
        )
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        let theirs = try await BumblePeripheral.start(
            on: rig,
            chip: 1,
            name: "bumble-p",
            udpPort: Int(server.localAddress.port)
        )
        defer { theirs.stop() }

        let listed = try await Self.scan(for: ["sim-cli", "bumble-p"], controller: controller(2))
        let devices = (try CLI.json(listed)["devices"] as? [[String: Any]]) ?? []
        #expect(Set(devices.compactMap { $0["name"] as? String }).isSuperset(of: ["sim-cli", "bumble-p"]), "\(listed)")
        #expect(devices.allSatisfy { $0["adapter"] as? String == controller(2) }, "\(listed)")

        let image = try BLEBenchmark.syntheticImage(size: 64 * 1024, version: (2, 0))
        let hash = try #require(try MCUbootImage(bytes: Array(image)).hash)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("hci-cli-\(UUID().uuidString).bin")
        try image.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        for name in ["sim-cli", "bumble-p"] {
            let url = "ble://\(name)?hci=\(controller(2))"
            let upgrade = try await Self.mcumgr(["--conn", url, "upgrade", file.path, "--json"]).finished()
            #expect(upgrade.status == 0, "\(name): \(upgrade.stderr); rig: \(rig.log)")
            let images = try await Self.mcumgr(["--conn", url, "image", "list", "--json"]).finished()
            #expect(images.stdout.contains(TestBytes.hex(Data(hash))), "\(name): \(images.stdout) \(images.stderr)")
        }
        #expect(await device.imageStates.contains { $0.hash == Data(hash) && $0.isActive && $0.isConfirmed })
        await server.stop()
    }

    @Test(arguments: [
        (["ble", "scan", "--hci", "bt://x"], "--hci: 'bt://x' is not a controller"),
        (["ble", "scan", "--hci", "tcp://127.0.0.1:0"], "is not a port"),
        (
            ["ble", "scan", "--hci", "tcp://127.0.0.1:9", "--hci-baud", "115200"],
            "a baud rate is for a serial controller"
        ),
        (["ble", "scan", "--hci", "tcp://127.0.0.1:9", "--adapter", "hci0"], "--adapter is BlueZ's"),
        (["ble", "scan", "--hci-baud", "115200"], "--hci-baud goes with --hci"),
        (["simulator", "--hci", "tcp://127.0.0.1:9"], "--hci goes with --ble NAME"),
        (["simulator", "--ble", "x", "--hci", "tcp://127.0.0.1:9", "--ble-acquire"], "--ble-acquire is BlueZ's"),
    ])
    func badControllerOptionsAreOneClearLine(arguments: [String], says: String) async {
        let result = await CLI.run(arguments)
        #expect(result.status != 0)
        CLI.expectOneErrorLine(result)
        #expect(result.stderr.contains(says), "\(result.stderr)")
    }

    /// A controller that is not there: one line naming it, soon (no scan is waited out).
    @Test func aControllerThatIsNotThereIsOneLine() async throws {
        let port = try closedTCPPort()
        let result = await CLI.run(["ble", "scan", "--hci", "tcp://127.0.0.1:\(port)", "--timeout", "1"])
        #expect(result.status != 0)
        CLI.expectOneErrorLine(result)
        #expect(result.stderr.contains("cannot use the controller at tcp://127.0.0.1:\(port)"), "\(result.stderr)")
    }
}
