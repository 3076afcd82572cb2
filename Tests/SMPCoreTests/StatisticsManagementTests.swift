import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct StatisticsManagementTests {
    @Test(arguments: [
        RequestCase(StatisticsManagement.GroupData(name: "smp"), "0800000a00020000a1646e616d6563736d70"),
        RequestCase(StatisticsManagement.ListGroups(), "0800000100020001a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func groupDataKeepsFieldOrder() throws {
        let data = try GroupTesting.response(
            to: StatisticsManagement.GroupData.self,
            ["name": "smp", "fields": ["z": 5, "a": 0, "m": .unsignedInt(UInt64.max)]]
        )
        #expect(data.name == "smp")
        #expect(data.fields.names == ["z", "a", "m"])
        #expect(data.fields["m"] == UInt64.max)
        let empty = try GroupTesting.response(to: StatisticsManagement.ListGroups.self, ["stat_list": []])
        #expect(empty.groups.isEmpty)
    }

    @Test func groupErrorsNameTheStatisticsCode() throws {
        let error = try #require(
            try GroupTesting.deviceError(StatisticsManagement.GroupData.self, ["err": ["group": 2, "rc": 2]])
        )
        #expect(error.codeName == "INVALID_GROUP" && error.matches(StatisticsManagement.ReturnCode.invalidGroup))
    }

    @Test(arguments: [
        ReturnCodeCase(StatisticsManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(StatisticsManagement.ReturnCode.unknown, 1, "UNKNOWN"),
        ReturnCodeCase(StatisticsManagement.ReturnCode.invalidGroup, 2, "INVALID_GROUP"),
        ReturnCodeCase(StatisticsManagement.ReturnCode.invalidStatName, 3, "INVALID_STAT_NAME"),
        ReturnCodeCase(StatisticsManagement.ReturnCode.invalidStatSize, 4, "INVALID_STAT_SIZE"),
        ReturnCodeCase(StatisticsManagement.ReturnCode.walkAborted, 5, "WALK_ABORTED"),
    ])
    func returnCodesFollowTheSpecTable(_ example: ReturnCodeCase<StatisticsManagement>) {
        example.verify()
        #expect(StatisticsManagement.returnCodeNames.count == 6)
    }
}
