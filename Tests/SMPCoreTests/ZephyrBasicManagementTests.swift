import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct ZephyrBasicManagementTests {
    @Test(arguments: [
        RequestCase(ZephyrBasicManagement.EraseStorage(), "0a000001003f0000a0"),
        RequestCase(ZephyrBasicManagement.EraseStorage(), version: .v1, "02000001003f0000a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func eraseAnswersEmptyOrAGroupError() throws {
        #expect(try GroupTesting.response(to: ZephyrBasicManagement.EraseStorage.self, [:]) == SMPEmptyResponse())
        let error = try #require(
            try GroupTesting.deviceError(ZephyrBasicManagement.EraseStorage.self, ["err": ["group": 63, "rc": 4]])
        )
        #expect(
            error.codeName == "FLASH_ERASE_FAILED" && error.matches(ZephyrBasicManagement.ReturnCode.flashEraseFailed)
        )
        #expect(error.description == "basic error 4 FLASH_ERASE_FAILED")
    }

    @Test(arguments: [
        ReturnCodeCase(ZephyrBasicManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(ZephyrBasicManagement.ReturnCode.unknown, 1, "UNKNOWN"),
        ReturnCodeCase(ZephyrBasicManagement.ReturnCode.flashOpenFailed, 2, "FLASH_OPEN_FAILED"),
        ReturnCodeCase(ZephyrBasicManagement.ReturnCode.flashConfigQueryFail, 3, "FLASH_CONFIG_QUERY_FAIL"),
        ReturnCodeCase(ZephyrBasicManagement.ReturnCode.flashEraseFailed, 4, "FLASH_ERASE_FAILED"),
    ])
    func returnCodesFollowTheSpecTable(_ example: ReturnCodeCase<ZephyrBasicManagement>) {
        example.verify()
        #expect(ZephyrBasicManagement.returnCodeNames.count == 5)
    }
}
