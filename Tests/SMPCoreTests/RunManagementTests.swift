import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct RunManagementTests {
    @Test(arguments: [
        RequestCase(
            RunManagement.Test(testName: "all", token: "t1"),
            "0a00001700070000a268746573746e616d6563616c6c65746f6b656e627431"
        ),
        RequestCase(RunManagement.List(), "0800000100070001a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func listDecodesAndTokenIsOptional() throws {
        #expect(
            try GroupTesting.response(to: RunManagement.List.self, ["rc": 0, "run_list": ["a"]]).testNames == ["a"]
        )
        let test = try CBORDecoder().decode(RunManagement.Test.self, from: ["testname": "os"] as CBOR)
        #expect(test.token == nil && test.testName == "os")
        let error = try #require(try GroupTesting.deviceError(RunManagement.Test.self, ["rc": 5]))
        #expect(error.codeName == "ENOENT")
    }

    @Test(arguments: [
        ReturnCodeCase(RunManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(RunManagement.ReturnCode.unknown, 1, "UNKNOWN"),
    ])
    func returnCodesAreTheSharedPair(_ example: ReturnCodeCase<RunManagement>) {
        example.verify()
    }
}
