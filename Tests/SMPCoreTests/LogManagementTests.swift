import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct LogManagementTests {
    @Test(arguments: [
        RequestCase(
            LogManagement.Show(logName: "log", timestamp: -1, index: 3),
            "0800001900040000a3686c6f675f6e616d65636c6f676274732065696e64657803"
        ),
        RequestCase(LogManagement.Show(), "0800000100040000a0"),
        RequestCase(LogManagement.Clear(), "0a00000100040001a0"),
        RequestCase(LogManagement.ModuleList(), "0800000100040003a0"),
        RequestCase(LogManagement.LevelList(), "0800000100040004a0"),
        RequestCase(LogManagement.List(), "0800000100040005a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func showDecodesTextAndByteMessages() throws {
        let response = try GroupTesting.response(
            to: LogManagement.Show.self,
            [
                "rc": 0, "next_index": 2,
                "logs": [
                    [
                        "name": "log", "type": 1,
                        "entries": [
                            ["msg": "hello", "ts": 10, "level": 1, "index": 0, "module": 2, "type": "str"],
                            ["msg": .byteString(Data([0xa0])), "ts": 11, "level": 0, "index": 1, "module": 2],
                        ],
                    ]
                ],
            ]
        )
        let entries = try #require(response.logs.first?.entries)
        #expect(entries.map(\.message) == [.text("hello"), .bytes(Data([0xa0]))])
        #expect(entries.first?.type == "str" && entries.last?.type == nil && entries.last?.imageHash == nil)
        #expect(response.nextIndex == 2)
    }

    @Test func tablesKeepDeviceOrder() throws {
        let modules = try GroupTesting.response(
            to: LogManagement.ModuleList.self,
            ["module_map": ["OS": 1, "DEFAULT": 0]]
        )
        #expect(modules.modules.names == ["OS", "DEFAULT"])
        let levels = try GroupTesting.response(to: LogManagement.LevelList.self, ["level_map": ["INFO": 1]])
        #expect(levels.levels["INFO"] == 1)
        let logs = try GroupTesting.response(to: LogManagement.List.self, ["log_list": ["a", "b"]])
        #expect(logs.logNames == ["a", "b"])
    }

    @Test func mynewtAnswersWithV1Codes() throws {
        let error = try #require(try GroupTesting.deviceError(LogManagement.Show.self, ["rc": 5]))
        #expect(error.codeName == "ENOENT" && error.returnCode == .noEntry)
        #expect(SMPGroup.log.returnCodeNames == ["OK", "UNKNOWN"])
        let v2 = try #require(try GroupTesting.deviceError(LogManagement.Clear.self, ["err": ["group": 4, "rc": 1]]))
        #expect(v2.codeName == "UNKNOWN")
        let unknown = try #require(
            try GroupTesting.deviceError(LogManagement.Clear.self, ["err": ["group": 4, "rc": 7]])
        )
        #expect(unknown.codeName == "UNKNOWN_RC")
    }

    @Test(arguments: [
        ReturnCodeCase(LogManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(LogManagement.ReturnCode.unknown, 1, "UNKNOWN"),
    ])
    func returnCodesAreTheSharedPair(_ example: ReturnCodeCase<LogManagement>) {
        example.verify()
    }
}
