import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct SettingsManagementTests {
    @Test(arguments: [
        RequestCase(
            SettingsManagement.Read(name: "bt/name", maxSize: 32),
            "0800001900030000a2646e616d656762742f6e616d65686d61785f73697a651820"
        ),
        RequestCase(
            SettingsManagement.Write(name: "a/b", value: Data([0, 1])),
            "0a00001100030000a2646e616d6563612f626376616c420001"
        ),
        RequestCase(SettingsManagement.Delete(name: "bt"), "0a00000900030001a1646e616d65626274"),
        RequestCase(SettingsManagement.Commit(), "0a00000100030002a0"),
        RequestCase(SettingsManagement.Load(), "0800000100030003a0"),
        RequestCase(SettingsManagement.Save(), "0a00000100030003a0"),
        RequestCase(SettingsManagement.Save(name: "bt"), "0a00000900030003a1646e616d65626274"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func readResponseMaxSizeIsOptional() throws {
        let plain = try GroupTesting.response(to: SettingsManagement.Read.self, ["val": .byteString(Data([9]))])
        #expect(plain == .init(value: Data([9])))
        let limited = try GroupTesting.response(
            to: SettingsManagement.Read.self,
            ["val": .byteString(Data()), "max_size": 16]
        )
        #expect(limited.maxSize == 16 && limited.value.isEmpty)
        #expect(throws: SMPError(.invalidResponse)) {
            try GroupTesting.response(to: SettingsManagement.Read.self, ["val": "text is not bytes"])
        }
    }

    @Test func groupErrorsNameTheSettingsCode() throws {
        let error = try #require(
            try GroupTesting.deviceError(SettingsManagement.Read.self, ["err": ["group": 3, "rc": 3]])
        )
        #expect(error.codeName == "KEY_NOT_FOUND" && error.matches(SettingsManagement.ReturnCode.keyNotFound))
    }

    @Test(arguments: [
        ReturnCodeCase(SettingsManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(SettingsManagement.ReturnCode.unknown, 1, "UNKNOWN"),
        ReturnCodeCase(SettingsManagement.ReturnCode.keyTooLong, 2, "KEY_TOO_LONG"),
        ReturnCodeCase(SettingsManagement.ReturnCode.keyNotFound, 3, "KEY_NOT_FOUND"),
        ReturnCodeCase(SettingsManagement.ReturnCode.readNotSupported, 4, "READ_NOT_SUPPORTED"),
        ReturnCodeCase(SettingsManagement.ReturnCode.rootKeyNotFound, 5, "ROOT_KEY_NOT_FOUND"),
        ReturnCodeCase(SettingsManagement.ReturnCode.writeNotSupported, 6, "WRITE_NOT_SUPPORTED"),
        ReturnCodeCase(SettingsManagement.ReturnCode.deleteNotSupported, 7, "DELETE_NOT_SUPPORTED"),
    ])
    func returnCodesFollowTheSpecTable(_ example: ReturnCodeCase<SettingsManagement>) {
        example.verify()
        #expect(SettingsManagement.returnCodeNames.count == 8)
    }
}
