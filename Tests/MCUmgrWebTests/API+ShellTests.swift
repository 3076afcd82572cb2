import Foundation
import HTTPTypes
import HummingbirdTesting
import SMPSimulator
import Testing

@testable import MCUmgrWeb

@Suite struct APIShellTests {
    @Test func aCommandsOutputAndReturnCode() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let answer = try await client.post(
                "/api/devices/\(id)/shell",
                #"{"command": "echo 'hello  web' there"}"#,
                harness
            )
            #expect(answer.status == .ok, "\(answer.text)")
            let object = try answer.object()
            #expect(object["output"] as? String == "hello  web there\n")
            #expect(object["return_code"] as? Int == 0)
            #expect(object["failure"] == nil)
        }
    }

    @Test func aFailingCommandSaysItsReturnCode() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let object = try await client.post("/api/devices/\(id)/shell", #"{"command": "kernel"}"#, harness).object()
            #expect((object["output"] as? String)?.contains("Subcommands:") == true)
            #expect(object["return_code"] as? Int == 1)
            #expect(object["failure"] as? String == "'kernel' returned 1 on the device")
        }
    }

    @Test(arguments: [
        (#"{"command": "   "}"#, "Command: give the shell command to run, e.g. kernel version"),
        (#"{"command": "echo \"open"}"#, "Command: a quote is not closed"),
        (#"{"command": "echo \u0001"}"#, "Command: the line contains control characters"),
    ])
    func aBadLineIsRefused(body: String, line: String) async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let id = try await client.addDevice(harness)
            let response = try await client.post("/api/devices/\(id)/shell", body, harness)
            #expect(response.status == .badRequest)
            #expect(response.errorLine == line)
        }
    }

    @Test func wordsSplitAtSpacesAndQuotesKeepThem() throws {
        #expect(try API.shellWords(#"fs ls "/lfs1/my dir" x''"#) == ["fs", "ls", "/lfs1/my dir", "x"])
    }
}
