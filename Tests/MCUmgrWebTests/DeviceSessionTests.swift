import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPSimulator
import Testing

@testable import MCUmgrWeb

@Suite struct DeviceSessionTests {
    static func session(_ device: SimulatedDevice) -> DeviceSession {
        DeviceSession(id: "d1", url: "sim://", transport: LoopbackTransport(device: device), environment: .init())
    }

    @Test func theLinkFollowsTheRequestsAndReconnects() async throws {
        let session = Self.session(SimulatedDevice())
        #expect(await session.link == .idle)
        _ = try await session.withClient { try await $0.send(OSManagement.Echo(text: "hi")) }
        #expect(await session.link == .connected)
        try await session.reconnect()
        #expect(await session.link == .connected)
    }

    /// One operation at a time: a second upgrade, and any other change, is refused naming the
    /// running one; the link is not shown down because the upgrade took it over.
    @Test func aSecondUpgradeIsRefusedWhileOneRuns() async throws {
        var configuration = SimulatedDevice.Configuration()
        configuration.writeBytesPerSecond = 32 * 1024
        let session = Self.session(SimulatedDevice(configuration: configuration))
        let bytes = FactoryImage.make(version: ImageVersion(major: 2, minor: 0, revision: 0), payloadSize: 64 * 1024)
        let package = try FirmwarePackage(data: Data(bytes), fileName: "app.bin")
        let operation = try await session.startUpgrade(
            package,
            file: "app.bin",
            configuration: .init(mode: .uploadOnly)
        )
        #expect(await session.link == .idle)
        await operation.pause()
        await #expect(throws: WebError.self) {
            _ = try await session.startUpgrade(package, file: "other.bin", configuration: .init(mode: .uploadOnly))
        }
        await #expect(throws: WebError.self) { try await session.checkIdle() }
        await operation.cancel()
        var last: OperationSnapshot?
        for await snapshot in await operation.subscribe() { last = snapshot }
        #expect(last?.status == "cancelled")
        try await session.checkIdle()
    }
}
