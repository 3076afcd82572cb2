import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct CrashManagementTests {
    @Test(arguments: [
        RequestCase(CrashManagement.Trigger(type: "assert"), "0a00000a00050000a1617466617373657274")
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func triggerRoundTripsAndAnswersEmpty() throws {
        let decoded = try CBORDecoder().decode(CrashManagement.Trigger.self, from: ["t": "div0"] as CBOR)
        #expect(decoded == CrashManagement.Trigger(type: "div0"))
        #expect(try GroupTesting.response(to: CrashManagement.Trigger.self, ["rc": 0]) == SMPEmptyResponse())
        let refused = try #require(try GroupTesting.deviceError(CrashManagement.Trigger.self, ["rc": 3]))
        #expect(refused.codeName == "EINVAL")
    }

    @Test(arguments: [
        ReturnCodeCase(CrashManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(CrashManagement.ReturnCode.unknown, 1, "UNKNOWN"),
    ])
    func returnCodesAreTheSharedPair(_ example: ReturnCodeCase<CrashManagement>) {
        example.verify()
    }
}
