import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct EnumerationManagementTests {
    @Test(arguments: [
        RequestCase(EnumerationManagement.GroupCount(), "08000001000a0000a0"),
        RequestCase(EnumerationManagement.ListGroups(), "08000001000a0001a0"),
        RequestCase(EnumerationManagement.GroupAtIndex(index: 2), "08000008000a0002a165696e64657802"),
        RequestCase(EnumerationManagement.GroupDetails(groups: [0, 63]), "0800000c000a0003a16667726f7570738200183f"),
        RequestCase(EnumerationManagement.GroupDetails(), "08000001000a0003a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func responsesDecodeWithOptionalFieldsAbsent() throws {
        let list = try GroupTesting.response(to: EnumerationManagement.ListGroups.self, ["groups": [0, 1, 66]])
        #expect(list.supportedGroups == [.os, .image, .suit])
        let notLast = try GroupTesting.response(to: EnumerationManagement.GroupAtIndex.self, ["group": 1])
        #expect(!notLast.isLast && notLast.end == nil)
        let last = try GroupTesting.response(to: EnumerationManagement.GroupAtIndex.self, ["group": 63, "end": true])
        #expect(last.isLast)
        let details = try GroupTesting.response(
            to: EnumerationManagement.GroupDetails.self,
            ["groups": [["group": 0, "name": "os", "handlers": 9], ["group": 1]]]
        )
        #expect(details.groups.last == .init(group: 1))
        #expect(try GroupTesting.response(to: EnumerationManagement.GroupCount.self, ["count": 4]).count == 4)
        #expect(throws: SMPError(.invalidResponse)) {
            try GroupTesting.response(to: EnumerationManagement.ListGroups.self, ["groups": [70_000]])
        }
    }

    @Test func groupErrorsNameTheEnumerationCode() throws {
        let error = try #require(
            try GroupTesting.deviceError(EnumerationManagement.GroupAtIndex.self, ["err": ["group": 10, "rc": 4]])
        )
        #expect(error.codeName == "INDEX_TOO_LARGE" && error.matches(EnumerationManagement.ReturnCode.indexTooLarge))
    }

    @Test(arguments: [
        ReturnCodeCase(EnumerationManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(EnumerationManagement.ReturnCode.unknown, 1, "UNKNOWN"),
        ReturnCodeCase(EnumerationManagement.ReturnCode.tooManyGroupEntries, 2, "TOO_MANY_GROUP_ENTRIES"),
        ReturnCodeCase(EnumerationManagement.ReturnCode.insufficientHeapForEntries, 3, "INSUFFICIENT_HEAP_FOR_ENTRIES"),
        ReturnCodeCase(EnumerationManagement.ReturnCode.indexTooLarge, 4, "INDEX_TOO_LARGE"),
    ])
    func returnCodesFollowTheSpecTable(_ example: ReturnCodeCase<EnumerationManagement>) {
        example.verify()
        #expect(EnumerationManagement.returnCodeNames.count == 5)
    }
}
