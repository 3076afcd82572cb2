import SMPCore
import Testing

@testable import SMPSimulator

/// Mynewt's log group, served only with `mynewt_logs`: a reboot log that gains an entry per boot
/// and keeps it across resets; without the option the device is Zephyr and has no such group.
@Suite("LogHandler")
struct LogHandlerTests {
    static func mynewt() throws -> SimulatedDevice.Configuration {
        try SimulatedDevice.Configuration(options: ["mynewt_logs": "1"])
    }

    @Test("a boot writes the reboot log; a reset adds one; index and clear work as Mynewt's")
    func rebootLog() async throws {
        var client = try await TestClient(configuration: try Self.mynewt())
        #expect(try await client.send(LogManagement.List()).logNames == ["reboot_log"])
        let first = try await client.send(LogManagement.Show(logName: nil, timestamp: nil, index: nil))
        let log = try #require(first.logs.first)
        #expect(log.name == "reboot_log" && log.type == 2)
        #expect(log.entries.map(\.message) == [.text("rsn:POWER_ON, cnt:1, img:1.0.0")])
        #expect(first.nextIndex == 1)

        _ = try await client.send(OSManagement.Reset())
        await client.device.waitUntilAnswering()
        let after = try await client.send(LogManagement.Show(logName: "reboot_log", timestamp: nil, index: 1))
        #expect(after.logs.first?.entries.map(\.message) == [.text("rsn:SOFT, cnt:2, img:1.0.0")])
        #expect(after.logs.first?.entries.map(\.index) == [1])
        #expect(after.nextIndex == 2)

        _ = try await client.send(LogManagement.Clear())
        let cleared = try await client.send(LogManagement.Show(logName: nil, timestamp: nil, index: nil))
        #expect(cleared.logs.first?.entries.isEmpty == true)
        #expect(cleared.nextIndex == 2, "a clear does not reuse indices")
        let missing = await deviceError {
            _ = try await client.send(LogManagement.Show(logName: "app", timestamp: nil, index: nil))
        }
        #expect(missing?.returnCode == .noEntry)
        #expect(try await client.send(LogManagement.LevelList()).levels.count == 5)
        #expect(try await client.send(LogManagement.ModuleList()).modules.count == 4)
    }

    @Test("the group is listed by enumeration only where it is served; a Zephyr device refuses it")
    func onlyWhenAskedFor() async throws {
        var mynewt = try await TestClient(configuration: try Self.mynewt())
        #expect(try await mynewt.send(EnumerationManagement.ListGroups()).groups.contains(4))
        var zephyr = try await TestClient()
        #expect(try await zephyr.send(EnumerationManagement.ListGroups()).groups.contains(4) == false)
        let refused = await deviceError { _ = try await zephyr.send(LogManagement.List()) }
        #expect(refused?.returnCode == .notSupported)
    }
}
