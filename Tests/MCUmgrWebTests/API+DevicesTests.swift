import Foundation
import HTTPTypes
import HummingbirdTesting
import SMPBytes
import SMPSimulator
import Testing

@Suite struct APIDevicesTests {
    @Test func addsADeviceByURLAndRemembersIt() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let again = try await client.addDevice(harness)
            #expect(again == id)
            let connections = try await client.get("/api/connections", harness).object()
            #expect(connections["recent"] as? [String] == ["sim://"])
            let devices = try #require(connections["devices"] as? [[String: Any]])
            #expect(devices.first?["link"] as? String == "connected")
        }
    }

    @Test func recentURLsComeFromAndGoToTheEnvironment() async throws {
        let saved = Saved()
        let harness = try WebHarness(
            loadRecent: { ["udp://192.0.2.1:1337"] },
            saveRecent: { urls in saved.set(urls) }
        )
        try await harness.test { client in
            let before = try await client.get("/api/connections", harness).object()
            #expect(before["recent"] as? [String] == ["udp://192.0.2.1:1337"])
            _ = try await client.addDevice(harness)
        }
        #expect(saved.get() == ["sim://", "udp://192.0.2.1:1337"])
    }

    /// What the server saved.
    final class Saved: Sendable {
        private let urls = Locked<[String]>([])
        func set(_ urls: [String]) { self.urls.withLock { $0 = urls } }
        func get() -> [String] { urls.withLock { $0 } }
    }

    @Test func aMalformedURLIsOneLine() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.post("/api/devices", #"{"url": "tcp://nowhere"}"#, harness)
            #expect(response.status == .badRequest)
            let line = try #require(response.errorLine)
            #expect(line.hasPrefix("Device URL: "))
            #expect(!line.contains("\n"))
        }
    }

    @Test func showsParametersAndBootloaderAndEchoes() async throws {
        let harness = try WebHarness(device: .init(bufferSize: 1024, bufferCount: 3))
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let info = try await client.get("/api/devices/\(id)/info", harness).object()
            #expect(info["buffer_size"] as? Int == 1024)
            #expect(info["buffer_count"] as? Int == 3)
            #expect(info["bootloader"] as? String == "MCUboot")
            #expect((info["os"] as? String)?.isEmpty == false)
            let echo = try await client.post("/api/devices/\(id)/echo", #"{"text": "hello web"}"#, harness).object()
            #expect(echo["echo"] as? String == "hello web")
        }
    }

    @Test func listsTheSavedProfiles() async throws {
        let harness = try WebHarness(profiles: { [(name: "board", url: "udp://192.0.2.1:1337")] })
        try await harness.test { client in
            let connections = try await client.get("/api/connections", harness).object()
            let profiles = try #require(connections["profiles"] as? [[String: String]])
            #expect(profiles == [["name": "board", "url": "udp://192.0.2.1:1337"]])
        }
    }

    @Test func reconnectsAndResets() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let reconnected = try await client.post("/api/devices/\(id)/reconnect", "{}", harness).object()
            #expect(reconnected["link"] as? String == "connected")
            let reset = try await client.post("/api/devices/\(id)/reset", "{}", harness)
            #expect(reset.status == .ok, "\(reset.text)")
        }
    }

    @Test func anUnknownDeviceIsNotFound() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.get("/api/devices/d99/info", harness)
            #expect(response.status == .notFound)
            #expect(response.errorLine?.contains("add it again") == true)
        }
    }
}
