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

    /// What the verbs print with `--json`, from the SMPCore types through `JSONValue(encoding:)`:
    /// wire names, bytes in hex, Zephyr's maps in the device's order. One row per type a verb
    /// prints as it is (responses, and the requests of writes whose answer is empty).
    @Test(
        arguments: [
            (
                try JSONValue(encoding: ShellManagement.Execute.Response(output: "ok\n", returnCode: 0)),
                #"{"o":"ok\n","ret":0}"#
            ),
            (
                try JSONValue(
                    encoding: LogManagement.Show.Response(
                        nextIndex: 3,
                        logs: [
                            .init(
                                name: "reboot_log",
                                type: 2,
                                entries: [
                                    .init(message: .text("boot"), timestamp: -1, level: 1, index: 1, module: 0),
                                    .init(
                                        message: .bytes(Data([0xa1])),
                                        timestamp: 7,
                                        level: 3,
                                        index: 2,
                                        module: 1,
                                        type: "cbor",
                                        imageHash: Data([0xde, 0xad])
                                    ),
                                ]
                            )
                        ]
                    )
                ),
                #"{"next_index":3,"logs":[{"name":"reboot_log","type":2,"entries":[{"msg":"boot","ts":-1,"level":1,"#
                    + #""index":1,"module":0},{"msg":"a1","ts":7,"level":3,"index":2,"module":1,"type":"cbor","#
                    + #""imghash":"dead"}]}]}"#
            ),
            (
                try JSONValue(encoding: LogManagement.ModuleList.Response(modules: ["os": 1, "app": 2])),
                #"{"module_map":{"os":1,"app":2}}"#
            ),
            (try JSONValue(encoding: RunManagement.List.Response(testNames: ["a"])), #"{"run_list":["a"]}"#),
            (
                try JSONValue(encoding: RunManagement.Test(testName: "all", token: "t")),
                #"{"testname":"all","token":"t"}"#
            ),
            (try JSONValue(encoding: CrashManagement.Trigger(type: "div0")), #"{"t":"div0"}"#),
            (
                try JSONValue(encoding: EnumerationManagement.GroupAtIndex.Response(group: 8, end: true)),
                #"{"group":8,"end":true}"#
            ),
            (
                try JSONValue(
                    encoding: EnumerationManagement.GroupDetails.Response(groups: [
                        .init(group: 0, name: "os", handlers: 7)
                    ])
                ),
                #"{"groups":[{"group":0,"name":"os","handlers":7}]}"#
            ),
            (
                try JSONValue(
                    encoding: ImageManagement.SlotInfo.Response(
                        images: [
                            .init(image: 0, slots: [.init(slot: 1, size: 4096, uploadImageID: 1)], maxImageSize: 4000)
                        ]
                    )
                ),
                #"{"images":[{"image":0,"slots":[{"slot":1,"size":4096,"upload_image_id":1}],"max_image_size":4000}]}"#
            ),
            (try JSONValue(encoding: ImageManagement.Erase(slot: 1)), #"{"slot":1}"#),
            (
                try JSONValue(encoding: SettingsManagement.Write(name: "a/b", value: Data([1, 2]))),
                #"{"name":"a/b","val":"0102"}"#
            ),
            (
                try JSONValue(encoding: OSManagement.DateTimeWrite(dateTime: "2026-11-22T16:00:00")),
                #"{"datetime":"2026-11-22T16:00:00"}"#
            ),
        ] as [(JSONValue, String)]
    )
    func typesPrintWithTheirWireKeys(_ value: JSONValue, _ expected: String) {
        #expect(value.rendered() == expected)
    }

    /// A request and its answer as one object: the request's fields first, the device's values
    /// replacing those of the same name where they stand.
    @Test func aRequestAndItsAnswerMerge() throws {
        let request = FileManagement.Hash(name: "/lfs1/a", type: .crc32, offset: 0, length: 100)
        let response = FileManagement.Hash.Response(type: .crc32, length: 12, output: .checksum(0xdead))
        let merged = try JSONValue(encoding: request).merging(try JSONValue(encoding: response))
        #expect(merged.rendered() == #"{"name":"/lfs1/a","type":"crc32","off":0,"len":12,"output":57005}"#)
        #expect(JSONValue.array([]).merging(.object([("a", .int(1))])).rendered() == #"{"a":1}"#)
        let renamed = JSONValue.object([("splitStatus", .int(0)), ("inner", .object([("splitStatus", .int(1))]))])
            .renamingKeys(["splitStatus": "split_status"])
        #expect(renamed.rendered() == #"{"split_status":0,"inner":{"splitStatus":1}}"#)
    }

    @Test func jsonAfterTheSeparatorIsNotOurs() {
        #expect(MCUmgrCommand.wantsJSON(["shell", "exec", "--json"]))
        #expect(!MCUmgrCommand.wantsJSON(["shell", "exec", "--", "log", "--json"]))
    }
}
