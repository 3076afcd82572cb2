import Foundation
import SMPCBOR
import SMPCore
import Testing

@testable import SMPSimulator

@Suite("ShellHandler")
struct ShellHandlerTests {
    @Test(
        "a few real commands",
        arguments: [
            (["echo", "hello", "world"], "hello world\n", 0), (["kernel", "version"], "Zephyr version 3.4.0\n", 0),
            (["frobnicate"], "frobnicate: command not found\n", -8),
        ]
    )
    func commands(arguments: [String], output: String, status: Int) async throws {
        var client = try await TestClient()
        let response = try await client.send(ShellManagement.Execute(arguments: arguments))
        #expect(response.output == output)
        #expect(response.returnCode == status)
    }

    @Test("the mcuboot command shows the slots")
    func mcuboot() async throws {
        var client = try await TestClient()
        let response = try await client.send(ShellManagement.Execute(arguments: ["mcuboot"]))
        #expect(response.output.contains("swap type: none"))
        #expect(response.output.contains("version 1.0.0 active confirmed"))
    }

    @Test("empty and over-long commands are refused with the group's codes")
    func refusals() async throws {
        var client = try await TestClient()
        let empty = await deviceError { _ = try await client.send(ShellManagement.Execute(arguments: [])) }
        #expect(empty?.matches(ShellManagement.ReturnCode.emptyCommand) == true)
        let long = await deviceError {
            _ = try await client.send(ShellManagement.Execute(arguments: ["echo", String(repeating: "x", count: 300)]))
        }
        #expect(long?.matches(ShellManagement.ReturnCode.commandTooLong) == true)
        #expect(try await client.payload(group: .shell, command: 0, operation: .write, ["argv": "echo"])["rc"] == 3)
    }

    @Test("fs ls lists a folder as Zephyr's file system shell does")
    func fileSystemListing() async throws {
        var client = try await TestClient()
        let empty = try await client.send(ShellManagement.Execute(arguments: ["fs", "ls", "/lfs1"]))
        #expect(empty.output == "")
        #expect(empty.returnCode == 0)
        _ = try await client.send(
            FileManagement.Upload(offset: 0, data: Data("hi".utf8), name: "/lfs1/notes.txt", length: 2)
        )
        let listed = try await client.send(ShellManagement.Execute(arguments: ["fs", "ls"]))
        #expect(listed.output == "notes.txt\n")
        let missing = try await client.send(ShellManagement.Execute(arguments: ["fs", "ls", "/nowhere"]))
        #expect(missing.output == "Unable to open /nowhere (err -2)\n")
        #expect(missing.returnCode == -8)
    }
}
