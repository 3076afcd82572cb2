import Foundation
import MCUmgrKit
import SMPSimulator
import Testing

/// `MCUmgrKit` is one import for an app: README's program, written with it alone (and the
/// simulator in place of a device), compiles and upgrades. Nothing else is imported here, so a
/// module the kit stopped re-exporting fails the build.
@Suite struct MCUmgrKitTests {
    @Test func readmesProgramUpgradesWithOneImport() async throws {
        let device = SimulatedDevice()
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/hello-1.1.0.bin")
        // README's transport, made as README makes it (making one sends nothing); the simulated
        // device is then reached in-process instead.
        let readmes = try ConnectionURL(parsing: "udp://192.168.1.10").makeTransport()
        #expect(readmes is UDPTransport)
        let upgrade = FirmwareUpgrade(transport: LoopbackTransport(device: device))
        var completed = false
        for try await event in upgrade.run(try FirmwarePackage(contentsOf: example)) {
            if case .completed = event { completed = true }
        }
        #expect(completed)
        let running = await device.imageStates.first { $0.isActive }
        #expect(running?.version == "1.1.0")
    }
}
