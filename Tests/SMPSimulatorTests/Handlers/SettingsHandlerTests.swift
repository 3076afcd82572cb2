import Foundation
import SMPCBOR
import SMPCore
import Testing

@testable import SMPSimulator

@Suite("SettingsHandler")
struct SettingsHandlerTests {
    @Test("write, read, save, reset keeps saved values; unsaved values are lost")
    func lifecycle() async throws {
        var client = try await TestClient()
        _ = try await client.send(SettingsManagement.Write(name: "app/a", value: Data([1, 2, 3])))
        _ = try await client.send(SettingsManagement.Write(name: "other/b", value: Data([9])))
        #expect(try await client.send(SettingsManagement.Read(name: "app/a")).value == Data([1, 2, 3]))
        _ = try await client.send(SettingsManagement.Save(name: "app"))
        _ = try await client.send(SettingsManagement.Commit())
        _ = try await client.send(OSManagement.Reset())
        // The device reboots after its reset delay; settings are reloaded from storage then.
        await client.device.waitUntilAnswering()
        #expect(try await client.send(SettingsManagement.Read(name: "app/a")).value == Data([1, 2, 3]))
        let lost = await deviceError { _ = try await client.send(SettingsManagement.Read(name: "other/b")) }
        #expect(lost?.matches(SettingsManagement.ReturnCode.keyNotFound) == true)
        _ = try await client.send(SettingsManagement.Delete(name: "app/a"))
        _ = try await client.send(SettingsManagement.Load())
        let deleted = await deviceError { _ = try await client.send(SettingsManagement.Read(name: "app/a")) }
        #expect(deleted?.matches(SettingsManagement.ReturnCode.keyNotFound) == true)
    }

    @Test("read honours max_size and reports the device limit when asked for more")
    func maxSize() async throws {
        var client = try await TestClient()
        _ = try await client.send(SettingsManagement.Write(name: "k", value: Data(repeating: 7, count: 300)))
        let small = try await client.send(SettingsManagement.Read(name: "k", maxSize: 10))
        #expect(small.value.count == 10)
        #expect(small.maxSize == nil)
        let large = try await client.send(SettingsManagement.Read(name: "k", maxSize: 1000))
        #expect(large.value.count == 256)
        #expect(large.maxSize == 256)
    }

    static let longName: CBOR = .textString(String(repeating: "n", count: 65))
    static let one: CBOR = .byteString(Data([1]))
    static let badWriteCases: [(CBOR, String)] = [
        (.map(["name": longName, "val": one]), "KEY_TOO_LONG"),
        (.map(["name": 5, "val": one]), "EINVAL"),
        (.map(["name": "a", "val": "text"]), "EINVAL"),
        (.map(["val": one]), "EINVAL"),
        (.map(["name": "", "val": one]), "EINVAL"),
    ]

    @Test("bad input: long names, wrong types, missing fields", arguments: badWriteCases)
    func badWrites(request: CBOR, expected: String) async throws {
        var client = try await TestClient()
        let payload = try await client.payload(group: .settings, command: 0, operation: .write, request)
        if expected == "KEY_TOO_LONG" {
            #expect(payload["err"]?["rc"] == 2)
        } else {
            #expect(payload["rc"] == 3)
        }
    }

    static let write: AnswerCase.Step = { client in
        _ = try await client.send(SettingsManagement.Write(name: "app/a", value: Data([1, 2, 3])))
    }

    static let answers: [AnswerCase] = [
        AnswerCase(
            "read",
            before: write,
            SettingsManagement.Read(name: "app/a"),
            [
                "bf",  // {_
                "6376616c43010203",  //   "val": h'010203'
                "ff",  // }
            ]
        ),
        AnswerCase(
            "read asking for more than the device holds: its limit follows",
            before: write,
            SettingsManagement.Read(name: "app/a", maxSize: 1000),
            [
                "bf",  // {_
                "6376616c43010203",  //   "val": h'010203'
                "686d61785f73697a65190100",  //   "max_size": 256
                "ff",  // }
            ]
        ),
    ]

    @Test("answers byte for byte as Zephyr's settings_mgmt.c writes them", arguments: answers)
    func answerBytes(_ answer: AnswerCase) async throws {
        try await answer.check()
    }
}
