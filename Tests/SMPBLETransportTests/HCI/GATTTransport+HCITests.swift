import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBLETransport
import SMPCore
import SMPHCI
import SMPHCIHost
import SMPSimulator
import SMPTestSupport
import Testing

/// Our own LE host as the central, on a Bumble controller, against a peripheral run by Bumble's
/// own host (`Tests/Bumble/smp_peripheral.py`) with our simulated device behind it: the
/// controller, the link and the peer's GATT server are code we did not write.
@Suite(.serialized) struct GATTTransportHCITests {
    static func transport(_ rig: BumbleRig, target: String = "smp-rig") throws -> GATTTransport {
        let controller = try HCIControllerAddress(parsing: "tcp://127.0.0.1:\(rig.ports[1])")
        // Generous: a starved machine may take long to start scanning; nothing here waits it out.
        return GATTTransport.hci(.init(controller: controller, target: target, scanTimeout: .seconds(60)))
    }

    @Test(Peers.needed("bumble"))
    func ourCentralFindsConnectsAndEchoesThroughABumblePeripheral() async throws {
        try await BumbleRigTests.withRig { _, rig, peripheral in
            let client = try await SMPClient.connect(try Self.transport(rig), configuration: BLEHarness.patientClient)
            let echoed = try await client.send(OSManagement.Echo(text: "through our own host"))
            await client.close()
            #expect(echoed.text == "through our own host", "peripheral: \(peripheral.log); rig: \(rig.log)")
        }
    }

    @Test(Peers.needed("bumble"))
    func aDeviceThatIsNotThereIsAClearFailure() async throws {
        try await BumbleRigTests.withRig { _, rig, _ in
            let controller = try HCIControllerAddress(parsing: "tcp://127.0.0.1:\(rig.ports[1])")
            let transport = GATTTransport.hci(.init(controller: controller, target: "absent", scanTimeout: .seconds(2)))
            await #expect {
                _ = try await transport.connect()
            } throws: { error in
                "\(error)".contains("no connectable device named or addressed 'absent'")
                    && "\(error)".contains("smp-rig")
            }
        }
    }

    /// Every mode through Bumble's host: the device behind it resets (the modes that reset),
    /// the engine reconnects through a fresh scan, and the device ends as the mode says.
    @Test(Peers.needed("bumble"), arguments: FirmwareUpgrade.Mode.allCases)
    func ourCentralUpgradesThroughABumblePeripheral(mode: FirmwareUpgrade.Mode) async throws {
        try await BumbleRigTests.withRig { device, rig, peripheral in
            let image = try BLEHarness.image(size: 48 * 1024)
            let package = FirmwarePackage.Image(try MCUbootImage(bytes: Array(image.data)), imageIndex: 0, slot: 1)
            let upgrade = SimulatedHCIPeripheralTests.upgrade(try Self.transport(rig), mode: mode)
            var completed = false
            for try await event in upgrade.run(images: [package]) {
                if case .completed = event { completed = true }
            }
            #expect(completed, "peripheral: \(peripheral.log); rig: \(rig.log)")
            let states = await device.imageStates
            switch mode {
            case .uploadOnly: #expect(states.contains { $0.hash == image.hash && $0.slot == 1 }, "\(states)")
            case .testOnly:
                #expect(states.contains { $0.hash == image.hash && $0.isActive && !$0.isConfirmed }, "\(states)")
            case .testAndConfirm, .confirmOnly:
                #expect(states.contains { $0.hash == image.hash && $0.isActive && $0.isConfirmed }, "\(states)")
            }
        }
    }
}
