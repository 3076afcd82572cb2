import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct OSManagementTests {
    @Test(arguments: [
        RequestCase(OSManagement.Echo(text: "hello"), "0a00000900000000a161646568656c6c6f"),
        RequestCase(OSManagement.Echo(text: "hello"), version: .v1, "0200000900000000a161646568656c6c6f"),
        RequestCase(OSManagement.Reset(), sequence: 6, "0a00000100000605a0"),
        RequestCase(OSManagement.Reset(force: true), "0a00000800000005a165666f726365f5"),
        RequestCase(
            OSManagement.Reset(force: true, bootMode: OSManagement.Reset.bootloaderMode),
            "0a00001300000005a265666f726365f569626f6f745f6d6f646501"
        ),
        RequestCase(OSManagement.MCUmgrParameters(), sequence: 7, "0800000100000706a0"),
        RequestCase(
            OSManagement.DateTimeWrite(dateTime: "2026-01-02T03:04:05"),
            "0a00001e00000004a1686461746574696d6573323032362d30312d30325430333a30343a3035"
        ),
        RequestCase(OSManagement.ApplicationInfo(format: "a"), "0800000a00000007a166666f726d61746161"),
        RequestCase(OSManagement.ApplicationInfo(), "0800000100000007a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func resetDecodesForceAsBooleanOrInteger() throws {
        let decoder = CBORDecoder()
        #expect(try decoder.decode(OSManagement.Reset.self, from: ["force": 1] as CBOR).force == true)
        #expect(try decoder.decode(OSManagement.Reset.self, from: ["force": 0] as CBOR).force == false)
        #expect(
            try decoder.decode(OSManagement.Reset.self, from: ["force": true, "boot_mode": 1] as CBOR)
                == OSManagement.Reset(force: true, bootMode: 1)
        )
        #expect(try decoder.decode(OSManagement.Reset.self, from: [:] as CBOR) == OSManagement.Reset())
    }

    @Test func taskStatisticsKeepDeviceOrderAndOptionalFields() throws {
        let response = try GroupTesting.response(
            to: OSManagement.TaskStatistics.self,
            [
                "tasks": [
                    "zeta": ["prio": -1, "tid": 9, "state": 1],
                    "alpha": ["prio": 3, "tid": 1, "state": 0, "stkuse": 10, "stksiz": 64],
                ]
            ]
        )
        #expect(response.tasks.names == ["zeta", "alpha"])
        let zeta = try #require(response.tasks["zeta"])
        #expect(zeta.priority == -1 && zeta.stackUsed == nil && zeta.runtime == nil)
        #expect(response.tasks["alpha"]?.stackSize == 64)
        // Re-encoding keeps the order, so a simulated device answers byte-stably.
        let again = try CBORDecoder().decode(
            OSManagement.TaskStatistics.Response.self,
            from: try CBOREncoder().encodeToValue(response)
        )
        #expect(again == response)
    }

    @Test func memoryPoolsDecodeFromMpoolsOrTheTopLevel() throws {
        let nested = try GroupTesting.response(
            to: OSManagement.MemoryPoolStatistics.self,
            ["mpools": ["0": ["nblks": 10, "nfree": 4]]]
        )
        #expect(nested.pools["0"] == OSManagement.MemoryPoolStatistics.Pool(blockCount: 10, freeBlocks: 4))
        let flat = try GroupTesting.response(
            to: OSManagement.MemoryPoolStatistics.self,
            ["rc": 0, "heap": ["blksiz": 1, "nblks": 10, "nfree": 4, "min": 2]]
        )
        #expect(flat.pools.names == ["heap"])
        #expect(flat.pools["heap"]?.minimumFreeBlocks == 2)
    }

    @Test func bootloaderInfoAnswersEitherANameOrAMode() throws {
        let name = try GroupTesting.response(to: OSManagement.BootloaderInfo.self, ["bootloader": "MCUboot"])
        #expect(name == .init(bootloader: "MCUboot"))
        let mode = try GroupTesting.response(to: OSManagement.BootloaderInfo.self, ["mode": 9, "no-downgrade": true])
        #expect(mode.mode == .swapUsingOffset && mode.noDowngrade == true && mode.bootloader == nil)
        let future = try GroupTesting.response(to: OSManagement.BootloaderInfo.self, ["mode": 42])
        #expect(future.mode?.rawValue == 42 && future.mode?.description == "mode 42")
        #expect(OSManagement.MCUbootMode.unknown.description == "unknown")
    }

    @Test func echoAndParametersDecode() throws {
        #expect(try GroupTesting.response(to: OSManagement.Echo.self, ["r": "hi"]).text == "hi")
        let params = try GroupTesting.response(
            to: OSManagement.MCUmgrParameters.self,
            ["buf_size": 384, "buf_count": 4, "rc": 0]
        )
        #expect(params == .init(bufferSize: 384, bufferCount: 4))
        #expect(try GroupTesting.response(to: OSManagement.Reset.self, [:]) == SMPEmptyResponse())
        #expect(throws: SMPError(.invalidResponse)) { try GroupTesting.response(to: OSManagement.Echo.self, [:]) }
    }

    @Test func groupErrorsNameTheOSCode() throws {
        let error = try #require(
            try GroupTesting.deviceError(OSManagement.BootloaderInfo.self, ["err": ["group": 0, "rc": 3]])
        )
        #expect(error.codeName == "QUERY_YIELDS_NO_ANSWER")
        #expect(error.matches(OSManagement.ReturnCode.queryYieldsNoAnswer))
        #expect(error.description == "os error 3 QUERY_YIELDS_NO_ANSWER")
        let legacy = try #require(try GroupTesting.deviceError(OSManagement.Reset.self, ["rc": 10]))
        #expect(legacy.returnCode == .busy && legacy.codeName == "EBUSY")
        let unknown = try #require(
            try GroupTesting.deviceError(OSManagement.Echo.self, ["err": ["group": 0, "rc": 99]])
        )
        #expect(unknown.codeName == "UNKNOWN_RC")
    }

    @Test(arguments: [
        ReturnCodeCase(OSManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(OSManagement.ReturnCode.unknown, 1, "UNKNOWN"),
        ReturnCodeCase(OSManagement.ReturnCode.invalidFormat, 2, "INVALID_FORMAT"),
        ReturnCodeCase(OSManagement.ReturnCode.queryYieldsNoAnswer, 3, "QUERY_YIELDS_NO_ANSWER"),
        ReturnCodeCase(OSManagement.ReturnCode.rtcNotSet, 4, "RTC_NOT_SET"),
        ReturnCodeCase(OSManagement.ReturnCode.rtcCommandFailed, 5, "RTC_COMMAND_FAILED"),
        ReturnCodeCase(OSManagement.ReturnCode.queryResponseValueNotValid, 6, "QUERY_RESPONSE_VALUE_NOT_VALID"),
        ReturnCodeCase(OSManagement.ReturnCode.heapStatsFetchFailed, 7, "HEAP_STATS_FETCH_FAILED"),
    ])
    func returnCodesFollowTheSpecTable(_ example: ReturnCodeCase<OSManagement>) {
        example.verify()
        #expect(OSManagement.returnCodeNames.count == 8)
    }
}
