import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBLETransport
import SMPBytes
import SMPCore
import SMPHCI
import SMPHCIHost
import SMPSimulator
import SMPTestSupport
import Testing

/// Our simulator as a peripheral through our own LE host on a Bumble controller: driven by
/// smpclient's Bumble central (code we did not write), and by our own central through a second
/// controller of the same rig, with the link lost and the device reset on the way.
@Suite(.serialized) struct SimulatedHCIPeripheralTests {
    /// A two-chip rig, our peripheral advertising `name` on chip 0, the device behind it as
    /// Zephyr over BLE was seen (buf_size 2475, four buffers).
    struct Scene {
        let rig: BumbleRig
        let device: SimulatedDevice
        let peripheral: SimulatedHCIPeripheral
        var name: String { peripheral.name }

        static func start(device: SimulatedDevice? = nil, name: String = "sim-hci") async throws -> Scene {
            let device = device ?? SimulatedDevice(configuration: .init(bufferSize: 2475, bufferCount: 4))
            let rig = try await BumbleRig.start(chips: 2)
            do {
                let peripheral = SimulatedHCIPeripheral(
                    device: device,
                    name: name,
                    controller: try controller(rig, chip: 0)
                )
                try await peripheral.start()
                return Scene(rig: rig, device: device, peripheral: peripheral)
            } catch {
                rig.stop()
                throw error
            }
        }

        static func controller(_ rig: BumbleRig, chip: Int) throws -> HCIControllerAddress {
            try HCIControllerAddress(parsing: "tcp://127.0.0.1:\(rig.ports[chip])")
        }

        /// Our central on chip 1.
        func transport() throws -> GATTTransport {
            GATTTransport.hci(
                .init(controller: try Self.controller(rig, chip: 1), target: name, scanTimeout: .seconds(60))
            )
        }

        func stop() async {
            await peripheral.stop()
            rig.stop()
        }
    }

    static func upgrade(_ transport: GATTTransport, mode: FirmwareUpgrade.Mode) -> FirmwareUpgrade {
        FirmwareUpgrade(
            transport: transport,
            configuration: .init(
                mode: mode,
                firstChunkTimeout: .seconds(5),
                probeTimeout: .seconds(1),
                reconnectTimeout: .seconds(60),
                reconnectInterval: .milliseconds(10)
            ),
            clientConfiguration: BLEHarness.patientClient
        )
    }

    /// smpclient's own Bumble central (`SMPBumbleTransport`) finds our peripheral by name and
    /// echoes, uploads and lists through it.
    @Test(Peers.needed("bumble", "smpclient"))
    func smpclientsCentralUploadsThroughOurPeripheral() async throws {
        let scene = try await Scene.start()
        do {
            let image = try BLEHarness.image(size: 24 * 1024)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("hci-\(UUID().uuidString).bin")
            try image.data.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let output = try await Peers.run(
                "python3",
                [
                    BumbleRigTests.central, "--hci", scene.rig.hci(1), "--name", scene.name, "echo:to our peripheral",
                    "upload:\(file.path)", "images",
                ]
            )
            let steps = BumbleRigTests.steps(output)
            #expect(steps.count == 3, "central: \(String(decoding: output, as: UTF8.self)); rig: \(scene.rig.log)")
            #expect(steps.first?["text"] as? String == "to our peripheral")
            #expect(steps.dropFirst().first?["bytes"] as? Int == image.data.count)
            let listed = (steps.last?["images"] as? [[String: Any]]) ?? []
            #expect(listed.contains { $0["slot"] as? Int == 1 && $0["hash"] as? String == TestBytes.hex(image.hash) })
            #expect(await BLEHarness.slotOneHolds(image.hash, on: scene.device))
        } catch {
            await scene.stop()
            throw error
        }
        await scene.stop()
    }

    /// Ours to ours, every mode: the modes that reset drop the link (the device reboots) and the
    /// upgrade reconnects through a fresh scan.
    @Test(Peers.needed("bumble"), arguments: FirmwareUpgrade.Mode.allCases)
    func ourCentralUpgradesOurPeripheral(mode: FirmwareUpgrade.Mode) async throws {
        let scene = try await Scene.start()
        do {
            let image = try BLEHarness.image(size: 40 * 1024)
            let package = FirmwarePackage.Image(try MCUbootImage(bytes: Array(image.data)), imageIndex: 0, slot: 1)
            var completed = false
            for try await event in Self.upgrade(try scene.transport(), mode: mode).run(images: [package]) {
                if case .completed = event { completed = true }
            }
            #expect(completed)
            let states = await scene.device.imageStates
            switch mode {
            case .uploadOnly: #expect(states.contains { $0.hash == image.hash && $0.slot == 1 }, "\(states)")
            case .testOnly:
                #expect(states.contains { $0.hash == image.hash && $0.isActive && !$0.isConfirmed }, "\(states)")
            case .testAndConfirm, .confirmOnly:
                #expect(states.contains { $0.hash == image.hash && $0.isActive && $0.isConfirmed }, "\(states)")
            }
            let connections = await scene.peripheral.connectionCount
            #expect(mode == .uploadOnly ? connections >= 1 : connections >= 2)
        } catch {
            await scene.stop()
            throw error
        }
        await scene.stop()
    }

    /// The peripheral's controller goes away a third of the way through the upload (its socket
    /// closes: the rig ends the link with reason 0x08, as a device that lost power); a new host
    /// on the same chip serves the same device again. The upgrade reconnects and the upload
    /// resumes from the device's offset instead of starting over.
    @Test(Peers.needed("bumble"))
    func aLinkLostMidUploadReconnectsAndResumes() async throws {
        // 50 ms a chunk: the upload takes seconds of device time whatever the machine.
        let device = SimulatedDevice(
            configuration: .init(bufferSize: 2475, bufferCount: 4, requestProcessingTime: .milliseconds(50))
        )
        let scene = try await Scene.start(device: device)
        let size = 96 * 1024
        let replacement = Locked<SimulatedHCIPeripheral?>(nil)
        let restarterTask = Locked<Task<Void, any Error>?>(nil)
        do {
            let image = try BLEHarness.image(size: size)
            let package = FirmwarePackage.Image(try MCUbootImage(bytes: Array(image.data)), imageIndex: 0, slot: 1)
            let controller = try Scene.controller(scene.rig, chip: 0)
            let restarter = Task {
                // Bound by the upload's progress; cancelled if the upgrade fails first.
                while (await device.uploadSession?.offset ?? 0) <= size / 3 {
                    try await Task.sleep(for: .milliseconds(20))
                }
                // Silent until the link is back, so the upload cannot finish before it drops.
                await device.inject(.dropRequests(every: 1))
                await scene.peripheral.stop()
                // The chip takes one host at a time: the next may connect once the rig has seen
                // the first one's socket close.
                let gone = try await RealIO.poll(timeout: .seconds(600)) {
                    scene.rig.log.contains("chip 1: host 1 gone") ? true : nil
                }
                #expect(gone == true, "rig: \(scene.rig.log)")
                await device.setFaults(Faults())
                let next = SimulatedHCIPeripheral(device: device, name: scene.name, controller: controller)
                try await next.start()
                replacement.withLock { $0 = next }
            }
            restarterTask.withLock { $0 = restarter }
            var uploaded = 0
            var completed = false
            for try await event in Self.upgrade(try scene.transport(), mode: .uploadOnly).run(images: [package]) {
                if case .completed(let summary) = event {
                    completed = true
                    uploaded = summary.uploadedBytes
                }
            }
            try await restarter.value
            #expect(completed)
            #expect(await replacement.withLock { $0 }?.connectionCount ?? 0 >= 1)
            #expect(uploaded < 2 * size, "\(uploaded) bytes uploaded for a \(size)-byte image")
            #expect(await device.imageStates.contains { $0.hash == image.hash && $0.slot == 1 })
        } catch {
            Issue.record("rig: \(scene.rig.log)")
            restarterTask.withLock { $0?.cancel() }
            await replacement.withLock { $0 }?.stop()
            await scene.stop()
            throw error
        }
        await replacement.withLock { $0 }?.stop()
        await scene.stop()
    }

    /// Two devices upgraded at once through one controller (a fleet's `--ble-per-adapter 2`):
    /// both transports share the controller's one host — a socket controller, like a UART, takes
    /// one host — and each upgrade, reset and reconnection included, completes.
    @Test(Peers.needed("bumble"))
    func twoDevicesThroughOneControllerAtOnce() async throws {
        let rig = try await BumbleRig.start(chips: 3)
        defer { rig.stop() }
        var peripherals: [SimulatedHCIPeripheral] = []
        do {
            for (chip, name) in ["dev-a", "dev-b"].enumerated() {
                let device = SimulatedDevice(configuration: .init(bufferSize: 2475, bufferCount: 4))
                let peripheral = SimulatedHCIPeripheral(
                    device: device,
                    name: name,
                    controller: try Scene.controller(rig, chip: chip)
                )
                try await peripheral.start()
                peripherals.append(peripheral)
            }
            let central = try Scene.controller(rig, chip: 2)
            let image = try BLEHarness.image(size: 32 * 1024)
            let package = FirmwarePackage.Image(try MCUbootImage(bytes: Array(image.data)), imageIndex: 0, slot: 1)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for peripheral in peripherals {
                    let transport = GATTTransport.hci(
                        .init(controller: central, target: peripheral.name, scanTimeout: .seconds(60))
                    )
                    group.addTask {
                        var completed = false
                        for try await event in Self.upgrade(transport, mode: .testAndConfirm).run(images: [package]) {
                            if case .completed = event { completed = true }
                        }
                        #expect(completed, "\(peripheral.name)")
                    }
                }
                try await group.waitForAll()
            }
            for peripheral in peripherals {
                let states = await peripheral.device.imageStates
                #expect(
                    states.contains { $0.hash == image.hash && $0.isActive && $0.isConfirmed },
                    "\(peripheral.name): \(states)"
                )
            }
            // One host on the central's chip all along: never a second one refused.
            #expect(!rig.log.contains("chip 3: refused"), "\(rig.log)")
            #expect(rig.log.contains("chip 3: host 1 connected") && !rig.log.contains("chip 3: host 2"), "\(rig.log)")
        } catch {
            for peripheral in peripherals { await peripheral.stop() }
            throw error
        }
        for peripheral in peripherals { await peripheral.stop() }
    }
}
