import Foundation
import HTTPTypes
import HummingbirdTesting
import SMPSimulator
import Testing

@Suite struct APISettingsTests {
    @Test func aSettingWrittenReadsBackAsText() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let write = try await client.post(
                "/api/devices/\(id)/settings",
                #"{"name": "app/name", "value": "hello"}"#,
                harness
            )
            #expect(write.status == .ok, "\(write.text)")
            #expect(try write.object()["done"] as? String == "wrote app/name (5 bytes)")
            let read = try await client.get("/api/devices/\(id)/settings?name=app/name", harness).object()
            #expect(read["shown"] as? String == "hello")
            #expect(read["is_text"] as? Bool == true)
            #expect(read["hex"] as? String == "68656c6c6f")
            #expect(try await client.post("/api/devices/\(id)/settings/commit", "{}", harness).status == .ok)
            let saved = try await client.post("/api/devices/\(id)/settings/save", "{}", harness).object()
            #expect(saved["done"] as? String == "saved settings to storage")
        }
    }

    /// Bytes that are no printable text are shown in hex, as `mcumgr settings read` shows them.
    @Test func binaryValuesAreShownInHex() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let write = try await client.post(
                "/api/devices/\(id)/settings",
                #"{"name": "app/key", "value": "00:ff:10", "hex": true}"#,
                harness
            )
            #expect(write.status == .ok, "\(write.text)")
            let read = try await client.get("/api/devices/\(id)/settings?name=app/key", harness).object()
            #expect(read["shown"] as? String == "00ff10")
            #expect(read["is_text"] as? Bool == false)
        }
    }

    @Test(arguments: [
        (#"{"value": "x"}"#, "Setting name: give the setting's name, e.g. app/name"),
        (#"{"name": "a", "value": "zz", "hex": true}"#, "Value: 'zz' is not hex: use pairs of digits 0-9 a-f"),
        (#"{"name": "a"}"#, "Value: give the value to write"),
    ])
    func badInputIsRefused(body: String, line: String) async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.post("/api/devices/\(id)/settings", body, harness)
            #expect(response.status == .badRequest)
            #expect(response.errorLine == line)
        }
    }

    @Test func bodyThatIsNotJSONIsOneLine() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.post("/api/devices/\(id)/settings", "{name:", harness)
            #expect(response.status == .badRequest)
            #expect(response.errorLine?.hasPrefix("the request is not the JSON this call takes") == true)
        }
    }
}
