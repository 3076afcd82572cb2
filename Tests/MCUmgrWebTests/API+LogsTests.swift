import Foundation
import HTTPTypes
import HummingbirdTesting
import MCUmgr
import MCUmgrWeb
import SMPCore
import SMPSimulator
import Testing

/// The Logs screen's calls against a simulated device with Mynewt's log group (`mynewt_logs`),
/// and against a Zephyr device, which has none.
@Suite struct APILogsTests {
    static func mynewt() throws -> SimulatedDevice.Configuration {
        try SimulatedDevice.Configuration(options: ["mynewt_logs": "1"])
    }

    @Test func theRebootLogIsShownWithNamedModulesAndLevelsFromAnIndex() async throws {
        let harness = try WebHarness(device: try Self.mynewt())
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let shown = try await client.get("/api/devices/\(id)/logs", harness)
            #expect(shown.status == .ok, "\(shown.text)")
            let answer = try shown.object()
            #expect(answer["names"] as? [String] == ["reboot_log"])
            #expect(answer["next_index"] as? Int == 1)
            let log = try #require((answer["logs"] as? [[String: Any]])?.first)
            #expect(log["name"] as? String == "reboot_log")
            let entry = try #require((log["entries"] as? [[String: Any]])?.first)
            #expect(entry["message"] as? String == "rsn:POWER_ON, cnt:1, img:1.0.0")
            #expect(entry["module"] as? String == "REBOOT" && entry["level"] as? String == "CRITICAL", "\(entry)")
            #expect(entry["is_text"] as? Bool == true)
            let newer = try await client.get("/api/devices/\(id)/logs?log=reboot_log&index=1", harness).object()
            #expect(((newer["logs"] as? [[String: Any]])?.first?["entries"] as? [Any])?.isEmpty == true)
            let bad = try await client.get("/api/devices/\(id)/logs?index=-1", harness)
            #expect(bad.status == .badRequest)
            #expect(bad.errorLine == "From index: '-1' is not a number from 0 to 4294967295")
        }
    }

    /// Clear empties the log, as a client of our own reads it straight from the device.
    @Test func clearEmptiesTheDevicesLog() async throws {
        let harness = try WebHarness(device: try Self.mynewt())
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let cleared = try await client.post("/api/devices/\(id)/logs/clear", "{}", harness)
            #expect(cleared.status == .ok, "\(cleared.text)")
            #expect(try cleared.object()["done"] as? String == "cleared the logs")
        }
        let check = try await SMPClient.connect(LoopbackTransport(device: harness.device))
        let log = try await check.send(LogManagement.Show(logName: nil, timestamp: nil, index: nil))
        await check.close()
        #expect(log.logs.first?.entries.isEmpty == true)
    }

    @Test func aZephyrDeviceSaysItHasNoLogGroup() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.get("/api/devices/\(id)/logs", harness)
            #expect(response.status == .conflict)
            #expect(response.errorLine?.isEmpty == false, "\(response.text)")
        }
    }
}
