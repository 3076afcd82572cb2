import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct ShellManagementTests {
    @Test(arguments: [
        RequestCase(
            ShellManagement.Execute(arguments: ["echo", "hi"]),
            "0a00000f00090000a1646172677682646563686f626869"
        )
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test(arguments: [
        (["o": "ok\n", "ret": 0] as CBOR, 0 as Int?),
        (["o": "bad\n", "ret": -22] as CBOR, -22),
        (["o": "legacy\n", "rc": 3] as CBOR, 3),
        (["o": "both\n", "ret": 1, "rc": 0] as CBOR, 1),
        (["o": "none\n"] as CBOR, nil),
    ])
    func exitCodeComesFromRetOrLegacyRc(_ payload: CBOR, _ code: Int?) throws {
        let response = try GroupTesting.response(to: ShellManagement.Execute.self, payload)
        #expect(response.returnCode == code)
    }

    @Test func encodingWritesRetNotRc() throws {
        let value = try CBOREncoder().encodeToValue(ShellManagement.Execute.Response(output: "x", returnCode: 3))
        #expect(value == ["o": "x", "ret": 3])
    }

    @Test func groupErrorsUseZephyrNames() throws {
        // The smp package calls 2 INVALID_FORMAT; Zephyr calls it COMMAND_TOO_LONG.
        let tooLong = try #require(
            try GroupTesting.deviceError(ShellManagement.Execute.self, ["err": ["group": 9, "rc": 2]])
        )
        #expect(tooLong.codeName == "COMMAND_TOO_LONG")
        let empty = try #require(
            try GroupTesting.deviceError(ShellManagement.Execute.self, ["err": ["group": 9, "rc": 3]])
        )
        #expect(empty.matches(ShellManagement.ReturnCode.emptyCommand))
        // An `rc` without output is a refusal, not an exit code.
        let refused = try #require(try GroupTesting.deviceError(ShellManagement.Execute.self, ["rc": 8]))
        #expect(refused.codeName == "ENOTSUP")
    }

    @Test(arguments: [
        ReturnCodeCase(ShellManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(ShellManagement.ReturnCode.unknown, 1, "UNKNOWN"),
        ReturnCodeCase(ShellManagement.ReturnCode.commandTooLong, 2, "COMMAND_TOO_LONG"),
        ReturnCodeCase(ShellManagement.ReturnCode.emptyCommand, 3, "EMPTY_COMMAND"),
    ])
    func returnCodesFollowTheSpecTable(_ example: ReturnCodeCase<ShellManagement>) {
        example.verify()
        #expect(ShellManagement.returnCodeNames.count == 4)
    }
}
