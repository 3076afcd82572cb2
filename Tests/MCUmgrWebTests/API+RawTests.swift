import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import SMPSimulator
import Testing

@Suite struct APIRawTests {
    /// OS group 0, command 0 (echo), write `{"d": "hi"}`: the request frame's bytes, and the
    /// answer decoded as `mcumgr decode` shows it.
    @Test func anEchoShowsTheFrameAndTheDecodedAnswer() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.post(
                "/api/devices/\(id)/raw",
                #"{"group": 0, "command": 0, "operation": "write", "body": "{\"d\": \"hi\"}"}"#,
                harness
            )
            #expect(response.status == .ok, "\(response.text)")
            let answer = try response.object()
            let hex = try #require(answer["request_hex"] as? String)
            // Write (2) in SMP v2 (bit 3), length 6, group 0, command 0; {"d": "hi"}.
            #expect(hex.hasPrefix("0a0000060000"), "\(hex)")
            #expect(hex.hasSuffix("00a16164626869"), "\(hex)")
            #expect(hex.count == 2 * 14)
            let request = try #require(answer["request"] as? String)
            #expect(request.hasPrefix("header: SMP v2 write, group 0 (os), command 0"), "\(request)")
            let decoded = try #require(answer["response"] as? String)
            #expect(decoded.contains("write-response, group 0 (os), command 0"), "\(decoded)")
            #expect(decoded.hasSuffix(#"payload: {"r": "hi"}"#), "\(decoded)")
            #expect((answer["response_hex"] as? String)?.hasPrefix("0b") == true)
        }
    }

    /// A byte string in the body reaches the device as one: a setting written with
    /// `{"$hex": …}` reads back as those bytes (`h'…'` in the decoded answer).
    @Test func aByteStringInTheBodyReachesTheDevice() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let write = try await client.post(
                "/api/devices/\(id)/raw",
                #"{"group": 3, "command": 0, "operation": "write", "body": "{\"name\": \"app/key\", \"val\": {\"$hex\": \"00ff10\"}}"}"#,
                harness
            )
            #expect(write.status == .ok, "\(write.text)")
            #expect((try write.object()["request"] as? String)?.contains("h'00ff10'") == true, "\(write.text)")
            let read = try await client.post(
                "/api/devices/\(id)/raw",
                #"{"group": 3, "command": 0, "operation": "read", "body": "{\"name\": \"app/key\"}"}"#,
                harness
            )
            let decoded = try #require(try read.object()["response"] as? String)
            #expect(decoded.contains(#""val": h'00ff10'"#), "\(decoded)")
        }
    }

    @Test(arguments: [
        (#"{"group": 70000, "command": 0, "body": "{}"}"#, "Group: 70000 is not between 0 and 65535"),
        (#"{"group": 0, "command": 256, "body": "{}"}"#, "Command: 256 is not between 0 and 255"),
        (#"{"group": -1, "command": 0}"#, "Group: -1 is not between 0 and 65535"),
        (#"{"group": 0, "command": 0, "operation": "erase"}"#, "Operation: 'erase' is not one of read, write"),
        (
            #"{"group": 0, "command": 0, "body": "[1]"}"#,
            #"Body (JSON): an SMP payload is a JSON object, e.g. {"d": "hi"}"#
        ),
    ])
    func badInputIsRefused(body: String, line: String) async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.post("/api/devices/\(id)/raw", body, harness)
            #expect(response.status == .badRequest)
            #expect(response.errorLine == line)
        }
    }

    @Test func aBodyThatIsNotJSONSaysSo() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.post(
                "/api/devices/\(id)/raw",
                #"{"group": 0, "command": 0, "body": "{d: hi"}"#,
                harness
            )
            #expect(response.status == .badRequest)
            #expect(response.errorLine?.hasPrefix("Body (JSON): not JSON") == true, "\(response.text)")
        }
    }

    /// A state-changing request from another origin (or none) never reaches the device.
    @Test func aPostWithoutOriginIsForbidden() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.execute(
                uri: "/api/devices/\(id)/raw",
                method: .post,
                headers: harness.headers(origin: nil, json: true),
                body: ByteBuffer(string: #"{"group": 0, "command": 0, "operation": "write", "body": "{}"}"#)
            )
            #expect(response.status == .forbidden)
            #expect(response.errorLine?.hasPrefix("refused: a request that changes something") == true)
        }
    }
}
