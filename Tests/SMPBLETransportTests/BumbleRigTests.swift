import Foundation
import MCUboot
import SMPPOSIX
import SMPSimulator
import SMPTestSupport
import Testing

/// The Bluetooth rig of the HCI host work (issue 30) proven with two stacks we did not write
/// before our own host joins it: smpclient's Bumble transport as the central, Bumble's own host as
/// the peripheral (`Tests/Bumble/smp_peripheral.py`), both on Bumble controllers of one
/// `BumbleRig`, the SMP server behind the peripheral our simulated device.
@Suite(.serialized) struct BumbleRigTests {
    /// Runs `body` with a simulated device as Zephyr's SMP server over BLE was seen (buf_size
    /// 2475, four buffers) behind a Bumble-host peripheral advertising "smp-rig" on chip 0 of a
    /// two-chip rig; chip 1 is the central's. The device is served over UDP on loopback to the
    /// peripheral, which forwards whole reassembled frames: that hop models no link, so it cuts no
    /// datagram. Everything is stopped when `body` ends, thrown or not.
    static func withRig(
        _ body: (SimulatedDevice, BumbleRig, BumblePeripheral) async throws -> Void
    ) async throws {
        let device = SimulatedDevice(
            configuration: .init(bufferSize: 2475, bufferCount: 4, maximumDatagramSize: 65_507)
        )
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        var thrown: (any Error)?
        do {
            let rig = try await BumbleRig.start(chips: 2)
            defer { rig.stop() }
            let peripheral = try await BumblePeripheral.start(
                on: rig,
                chip: 0,
                name: "smp-rig",
                udpPort: Int(server.localAddress.port)
            )
            defer { peripheral.stop() }
            try await body(device, rig, peripheral)
        } catch {
            thrown = error
        }
        await server.stop()
        if let thrown { throw thrown }
    }

    /// The lines smpclient's central printed, one JSON object per step.
    static func steps(_ output: Data) -> [[String: Any]] {
        String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    static var central: String { Peers.packageRoot.appendingPathComponent("Tests/Bumble/smpclient_central.py").path }

    @Test(Peers.needed("bumble", "smpclient"))
    func anIndependentCentralUploadsThroughTheRigToTheSimulator() async throws {
        try await Self.withRig { device, rig, _ in
            let image = try BLEHarness.image(size: 24 * 1024)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("rig-\(UUID().uuidString).bin")
            try image.data.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }

            let output = try await Peers.run(
                "python3",
                [
                    Self.central, "--hci", rig.hci(1), "--name", "smp-rig", "echo:over bumble", "upload:\(file.path)",
                    "images",
                ]
            )
            let steps = Self.steps(output)
            #expect(steps.count == 3, "central: \(String(decoding: output, as: UTF8.self)); rig: \(rig.log)")
            #expect(steps.first?["text"] as? String == "over bumble")
            #expect(steps.dropFirst().first?["bytes"] as? Int == image.data.count)
            let listed = (steps.last?["images"] as? [[String: Any]]) ?? []
            #expect(listed.contains { $0["slot"] as? Int == 1 && $0["hash"] as? String == TestBytes.hex(image.hash) })
            // The device's own flash, not only what the central was told.
            #expect(await BLEHarness.slotOneHolds(image.hash, on: device))
        }
    }

    /// A host whose socket closes (a dongle pulled, a process killed) ends its links toward the
    /// peer with reason 0x08, as a device that lost power does over the air: the rig must show it,
    /// since the link-loss tests of our own host rely on it.
    @Test(Peers.needed("bumble", "smpclient"))
    func aCentralThatGoesAwayIsALinkLossForThePeripheral() async throws {
        try await Self.withRig { _, rig, peripheral in
            guard let python = Peers.python else { throw PeerError(message: "no Python with the peers") }
            let central = RunningProcess(
                python,
                ["-u", Self.central, "--hci", rig.hci(1), "--name", "smp-rig", "echo:hello", "hold"],
                timeout: Peers.processTimeout
            )
            defer { central.stop() }
            let echoed = try await central.waitForOutput { stdout, _ in stdout.contains("\"hello\"") }
            #expect(echoed, "central: \(central.output.stdout) \(central.output.stderr)")
            central.send(SIGKILL)
            let lost = try await RealIO.poll(timeout: .seconds(120)) {
                peripheral.log.contains("disconnected, reason 0x08") ? true : nil
            }
            #expect(lost == true, "peripheral: \(peripheral.log); rig: \(rig.log)")
        }
    }
}
