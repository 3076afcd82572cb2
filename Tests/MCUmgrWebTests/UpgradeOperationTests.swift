import Foundation
import MCUboot
import MCUmgrDFU
import SMPSimulator
import Testing

@testable import MCUmgrWeb

@Suite struct UpgradeOperationTests {
    /// The operation runs on its own; a tab that subscribes afterwards gets the final snapshot
    /// and an ended stream.
    @Test func runsWithoutATabAndALateTabSeesTheEnd() async throws {
        let device = SimulatedDevice()
        let bytes = FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0))
        let package = try FirmwarePackage(data: Data(bytes), fileName: "app.bin")
        let upgrade = FirmwareUpgrade(
            transport: LoopbackTransport(device: device),
            configuration: .init(mode: .uploadOnly)
        )
        let operation = UpgradeOperation(
            run: upgrade.run(package),
            file: "app.bin",
            mode: .uploadOnly,
            connection: "sim://",
            environment: .init()
        )
        await operation.start()
        var seen: [OperationSnapshot] = []
        for await snapshot in await operation.subscribe() { seen.append(snapshot) }
        let last = try #require(seen.last)
        #expect(last.finished)
        #expect(last.status == "succeeded")
        #expect(last.progress?.percent == 100)
        #expect(last.steps.allSatisfy { $0.outcome == "done" })
        var late: [OperationSnapshot] = []
        for await snapshot in await operation.subscribe() { late.append(snapshot) }
        #expect(late == [last])
    }
}
