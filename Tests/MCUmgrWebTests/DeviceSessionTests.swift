import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPBytes
import SMPCore
import SMPSimulator
import SMPTestSupport
import Testing

@testable import MCUmgrWeb

@Suite struct DeviceSessionTests {
    static func session(_ device: SimulatedDevice) -> DeviceSession {
        DeviceSession(id: "d1", url: "sim://", transport: LoopbackTransport(device: device), environment: .init())
    }

    /// The Files screen's paths are kept through the environment by the device's URL: a session
    /// of the next run (a new server) offers them again, most recent first, at most twenty.
    @Test func rememberedPathsAreKeptForTheNextRun() async throws {
        let kept = Locked<[String: [String]]>([:])
        let environment = WebEnvironment(
            loadPaths: { url in kept.withLock { $0 }[url] ?? [] },
            savePaths: { url, paths in kept.withLock { $0[url] = paths } }
        )
        let first = DeviceSession(
            id: "d1",
            url: "sim://",
            transport: LoopbackTransport(device: SimulatedDevice()),
            environment: environment
        )
        for index in 0..<25 { await first.remember("/lfs1/\(index).txt") }
        await first.remember("/lfs1/3.txt")
        let expected = ["/lfs1/3.txt"] + (5..<25).reversed().filter { $0 != 3 }.map { "/lfs1/\($0).txt" }.prefix(19)
        #expect(kept.withLock { $0 }["sim://"] == Array(expected))
        let next = DeviceSession(
            id: "d7",
            url: "sim://",
            transport: LoopbackTransport(device: SimulatedDevice()),
            environment: environment
        )
        #expect(await next.rememberedPaths == Array(expected))
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
