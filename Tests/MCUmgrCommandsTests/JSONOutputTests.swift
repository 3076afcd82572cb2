import Foundation
import SMPCore
import Testing

@testable import MCUmgrCommands

/// `--json` conventions across verbs: snake_case keys everywhere, and a failing command's error
/// object the same shape whatever the verb.
@Suite struct JSONOutputTests {
    /// The keys of every object in a JSON value, recursively, except inside maps whose keys are
    /// data rather than names (a device's counters, task names, profile names).
    static func keys(_ value: Any, skipping dataMaps: Set<String> = []) -> [String] {
        if let array = value as? [Any] { return array.flatMap { keys($0, skipping: dataMaps) } }
        guard let object = value as? [String: Any] else { return [] }
        return object.flatMap { key, member in
            [key] + (dataMaps.contains(key) ? [] : keys(member, skipping: dataMaps))
        }
    }

    static func isSnakeCase(_ key: String) -> Bool {
        !key.isEmpty && key.allSatisfy { $0.isASCII && ($0.isLowercase || $0.isNumber || $0 == "_") }
    }

    /// Commands whose `--json` output is ours to name (device maps are skipped by key).
    @Test(arguments: [
        ["os", "echo", "hi"], ["os", "params"], ["os", "bootloader"], ["os", "bootloader", "--query", "mode"],
        ["image", "list"], ["image", "slots"], ["settings", "read", "app/x"], ["fs", "types"], ["enum", "list"],
        ["stat", "list"], ["shell", "exec", "kernel", "version"],
        ["image", "upload", CLI.fixture("unsigned.bin")], ["upgrade", UpgradeCommandTests.example],
        ["bench", "ble", "--profile", "fast", "--window", "1", "--size", "4096"],
        ["image", "info", CLI.fixture("unsigned.bin")], ["decode", "0a00000900000000a161646568656c6c6f"],
    ])
    func keysAreSnakeCase(_ arguments: [String]) async throws {
        let device = SimDevice(options: "zephyr=latest")
        try device.saveSettings(["app/x": Data("1".utf8)])
        let connection = CLI.worksWithoutADevice(arguments) ? [] : ["--conn", device.url]
        let result = await CLI.run(arguments + ["--json"] + connection)
        #expect(result.status == 0, "\(result.stderr)")
        let documents = try CLI.lines(result.stdout).map {
            try JSONSerialization.jsonObject(with: Data($0.utf8))
        }
        #expect(!documents.isEmpty)
        // `types` (fs) is a map of the device's hash names; `payload` (decode) is the frame's own.
        let bad = documents.flatMap { Self.keys($0, skipping: ["types", "payload"]) }.filter { !Self.isSnakeCase($0) }
        #expect(bad == [], "\(arguments)")
    }

    /// The same error object whatever failed and whichever verb: a usage error, a device
    /// refusal, a bad local file, a failed upload.
    @Test(
        arguments: [
            (["os", "echo"], 64, "usage"),
            (["settings", "read", "app/none"], 1, "device_refused"),
            (["fs", "status", "/lfs1/none"], 1, "device_refused"),
            (["image", "info", "/nonexistent.bin"], 66, "unreadable_input"),
            (["fs", "upload", "/nonexistent", "/lfs1/x"], 66, "unreadable_input"),
            (["decode", "zz"], 65, "bad_input"),
            (["image", "test", "abcd"], 1, "failed"),
        ] as [([String], Int, String)]
    )
    func errorObjectIsTheSameForEveryVerb(_ arguments: [String], _ status: Int, _ kind: String) async throws {
        let result =
            CLI.worksWithoutADevice(arguments)
            ? await CLI.run(arguments + ["--json"]) : await CLI.sim(arguments: arguments + ["--json"])
        #expect(Int(result.status) == status, "\(result.stderr)")
        CLI.expectOneErrorLine(result)
        let object = try CLI.json(try #require(CLI.lines(result.stdout).last))
        let error = try #require(object["error"] as? [String: Any])
        #expect(object.count == 1)
        #expect(error.keys.sorted() == ["kind", "message", "status"])
        #expect(error["status"] as? Int == status)
        #expect(error["kind"] as? String == kind)
        #expect(result.stderr == "error: \(error["message"] as? String ?? "")\n")
    }

    /// After `--`, `--json` belongs to the shell command: no error object for it.
    /// A response prints with its wire keys, from its type: nothing is spelled again in the CLI.
    @Test func responsesPrintWithTheirWireKeys() throws {
        let parameters = OSManagement.MCUmgrParameters.Response(bufferSize: 2048, bufferCount: 4)
        #expect(try JSONValue(encoding: parameters).rendered() == #"{"buf_size":2048,"buf_count":4}"#)
        let echo = OSManagement.Echo.Response(text: "hi")
        #expect(try JSONValue(encoding: echo).rendered() == #"{"r":"hi"}"#)
    }

    @Test func jsonAfterTheSeparatorIsNotOurs() {
        #expect(MCUmgrCommand.wantsJSON(["shell", "exec", "--json"]))
        #expect(!MCUmgrCommand.wantsJSON(["shell", "exec", "--", "log", "--json"]))
    }
}
