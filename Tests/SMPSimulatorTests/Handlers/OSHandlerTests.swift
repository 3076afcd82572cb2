import Foundation
import SMPCBOR
import SMPCore
import Testing

@testable import SMPSimulator

@Suite("OSHandler")
struct OSHandlerTests {
    @Test("echo answers reads and writes; a missing d echoes nothing; a number for d is EINVAL")
    func echo() async throws {
        var client = try await TestClient()
        #expect(try await client.send(OSManagement.Echo(text: "héllo")).text == "héllo")
        let read = try await client.payload(group: .os, command: 0, operation: .read, ["d": "r"])
        #expect(read["r"] == "r")
        #expect(try await client.payload(group: .os, command: 0, operation: .write, [:])["r"] == "")
        #expect(try await client.payload(group: .os, command: 0, operation: .write, ["d": 5])["rc"] == 3)
    }

    @Test("task and memory statistics decode into the typed responses")
    func statistics() async throws {
        var client = try await TestClient()
        let tasks = try await client.send(OSManagement.TaskStatistics())
        #expect(tasks.tasks.names.contains("main"))
        #expect(tasks.tasks["idle"]?.stackSize == 80)
        let pools = try await client.send(OSManagement.MemoryPoolStatistics())
        #expect(pools.pools["_system_heap"]?.blockCount == 16_384)
    }

    enum DateOutcome: Sendable { case accepted, invalid, rtcFailed }

    @Test(
        "date-time: set then get; malformed values are EINVAL, impossible dates fail in the RTC",
        arguments: [
            ("2026-02-30T10:00:00", DateOutcome.rtcFailed), ("2026-13-01T00:00:00", .invalid), ("2026-01-01", .invalid),
            ("not a date at all!!", .invalid), ("2025-06-01T12:34:56", .accepted),
            ("2025-06-01T12:34:56.123", .accepted),
            ("2025-06-01T12:34:61", .invalid),
        ]
    )
    func dateTime(text: String, outcome: DateOutcome) async throws {
        var client = try await TestClient()
        let error = await deviceError { _ = try await client.send(OSManagement.DateTimeWrite(dateTime: text)) }
        switch outcome {
        case .invalid:
            #expect(error?.returnCode == .invalidValue)
        case .rtcFailed:
            #expect(error?.matches(OSManagement.ReturnCode.rtcCommandFailed) == true)
        case .accepted:
            #expect(error == nil)
            let now = try await client.send(OSManagement.DateTimeRead()).dateTime
            #expect(now.hasPrefix(String(text.prefix(14))))
        }
    }

    @Test("reset answers, then the device boots again; force is accepted, as an integer too")
    func reset() async throws {
        var client = try await TestClient()
        _ = try await client.send(OSManagement.Reset(force: true))
        // Zephyr reboots after its reset delay, not while answering.
        await client.device.waitUntilAnswering()
        #expect(await client.device.bootCount == 2)
        // The smp package sends force as an integer; Zephyr ignores what it cannot decode.
        #expect(try await client.payload(group: .os, command: 5, operation: .write, ["force": 1]) == [:])
    }

    @Test(
        "boot_mode 1 is kept in retention and MCUboot stops in serial recovery; it clears it, so its reset boots the application"
    )
    func resetIntoRecovery() async throws {
        var client = try await TestClient()
        _ = try await client.send(OSManagement.Reset(bootMode: 1))
        await client.device.waitUntilAnswering()
        #expect(await client.device.stage == .serialRecovery)
        #expect(await client.device.lastBootMode == 1)
        // MCUboot's own reset: `rc 0`, then the application.
        #expect(try await client.payload(group: .os, command: 5, operation: .write, [:]) == ["rc": 0])
        await client.device.waitUntilAnswering()
        #expect(await client.device.stage == .application)
    }

    @Test("without a retention boot mode the key is ignored: a plain reset")
    func resetWithoutBootMode() async throws {
        var client = try await TestClient(configuration: .init(retentionBootMode: false))
        _ = try await client.send(OSManagement.Reset(bootMode: 1))
        await client.device.waitUntilAnswering()
        #expect(await client.device.stage == .application)
        #expect(await client.device.bootCount == 2)
    }

    @Test("a boot mode above 255 is refused and nothing resets; one that does not decode is ignored")
    func resetBootModeRange() async throws {
        var client = try await TestClient()
        #expect(try await client.payload(group: .os, command: 5, operation: .write, ["boot_mode": 300]) == ["rc": 3])
        await client.device.waitUntilAnswering()
        #expect(await client.device.bootCount == 1)
        #expect(try await client.payload(group: .os, command: 5, operation: .write, ["boot_mode": "one"]) == [:])
        await client.device.waitUntilAnswering()
        #expect(await client.device.stage == .application)
    }

    @Test("a power cycle loses the boot mode: only a reset keeps retention RAM")
    func powerCycleLosesBootMode() async throws {
        let device = SimulatedDevice(configuration: .init(resetDelay: .seconds(30)))
        var client = try await TestClient(device)
        _ = try await client.send(OSManagement.Reset(bootMode: 1))
        await device.reset()
        #expect(await device.stage == .application)
    }

    @Test("a reset hook that refuses unless forced answers EBUSY")
    func resetHook() async throws {
        var client = try await TestClient(configuration: .init(rejectResetUnlessForced: true))
        let error = await deviceError { _ = try await client.send(OSManagement.Reset()) }
        #expect(error?.returnCode == .busy)
        // A refused reset schedules no reboot: waiting for one returns with the device unbooted.
        await client.device.waitUntilAnswering()
        #expect(await client.device.bootCount == 1)
        _ = try await client.send(OSManagement.Reset(force: true))
        await client.device.waitUntilAnswering()
        #expect(await client.device.bootCount == 2)
    }

    @Test("MCUmgr parameters report the buffer")
    func parameters() async throws {
        var client = try await TestClient(configuration: .init(bufferSize: 384, bufferCount: 2))
        let response = try await client.send(OSManagement.MCUmgrParameters())
        #expect(response.bufferSize == 384)
        #expect(response.bufferCount == 2)
    }

    @Test(
        "application info: letters in any order, fields in fixed order",
        arguments: [
            (nil as String?, "Zephyr"), ("s", "Zephyr"), ("n", "zephyr"), ("on", "zephyr Zephyr"),
            ("sv", "Zephyr 3.4.0"),
            ("vs", "Zephyr 3.4.0"),
            ("a", "Zephyr zephyr v3.4.0-sim 3.4.0 Sun Nov 22 12:00:00 2026 posix native native_sim/native/64 Zephyr"),
            ("mi", "posix native_sim/native/64"),
        ]
    )
    func applicationInfo(format: String?, expected: String) async throws {
        var client = try await TestClient()
        #expect(try await client.send(OSManagement.ApplicationInfo(format: format)).output == expected)
    }

    @Test("application info with an unknown letter is INVALID_FORMAT (v2) / EINVAL (v1)")
    func applicationInfoInvalid() async throws {
        var client = try await TestClient()
        let v2 = await deviceError { _ = try await client.send(OSManagement.ApplicationInfo(format: "sx")) }
        #expect(v2?.matches(OSManagement.ReturnCode.invalidFormat) == true)
        let v1 = await deviceError {
            _ = try await client.send(OSManagement.ApplicationInfo(format: "sx"), version: .v1)
        }
        #expect(v1?.returnCode == .invalidValue)
    }

    @Test(
        "bootloader info: name, mode, no-downgrade, unknown query",
        arguments: BootloaderMode.allCases.filter { $0 != BootloaderMode.none }
    )
    func bootloaderInfo(mode: BootloaderMode) async throws {
        var client = try await TestClient(
            configuration: .init(release: .latest, bootloaderMode: mode, downgradePrevention: mode == .overwriteOnly)
        )
        #expect(try await client.send(OSManagement.BootloaderInfo()).bootloader == "MCUboot")
        let answer = try await client.send(OSManagement.BootloaderInfo(query: "mode"))
        #expect(answer.mode?.rawValue == mode.mcubootModeValue)
        // DirectXIP always boots the highest version, so Zephyr selects no-downgrade for it;
        // the other modes report it only when built with downgrade prevention.
        #expect(answer.noDowngrade == (mode == .overwriteOnly || mode.isDirectXIP ? true : nil))
        let error = await deviceError { _ = try await client.send(OSManagement.BootloaderInfo(query: "colour")) }
        #expect(error?.matches(OSManagement.ReturnCode.queryYieldsNoAnswer) == true)
    }

    @Test(
        "bootloader info reports no-downgrade for swap and overwrite modes only when built with downgrade prevention",
        arguments: [BootloaderMode.swapUsingScratch, .swapUsingMove, .swapUsingOffset, .overwriteOnly],
        [false, true]
    )
    func noDowngradeFollowsTheBuild(mode: BootloaderMode, prevention: Bool) async throws {
        var client = try await TestClient(
            configuration: .init(release: .latest, bootloaderMode: mode, downgradePrevention: prevention)
        )
        let answer = try await client.send(OSManagement.BootloaderInfo(query: "mode"))
        #expect(answer.noDowngrade == (prevention ? true : nil))
    }

    /// Zephyr before 3.7 never sent no-downgrade (its check lacked the `CONFIG_` prefix), whatever
    /// the build: the observed 3.4 default says nothing even where MCUboot refuses downgrades.
    @Test(
        "Zephyr 3.4 never reports no-downgrade",
        arguments: [BootloaderMode.swapUsingMove, .overwriteOnly, .directXIP, .directXIPWithRevert]
    )
    func noDowngradeIsNotReportedBy34(mode: BootloaderMode) async throws {
        var client = try await TestClient(configuration: .init(bootloaderMode: mode, downgradePrevention: true))
        #expect(try await client.send(OSManagement.BootloaderInfo(query: "mode")).noDowngrade == nil)
    }

    @Test("without a bootloader, bootloader info does not exist (ENOTSUP), for every query")
    func noBootloaderInfoWithoutABootloader() async throws {
        var client = try await TestClient(configuration: .init(bootloaderMode: .none))
        for query in [nil, "mode", "colour"] as [String?] {
            let error = await deviceError { _ = try await client.send(OSManagement.BootloaderInfo(query: query)) }
            #expect(error?.returnCode == .notSupported, "query \(query ?? "none")")
        }
        let v1 = await deviceError { _ = try await client.send(OSManagement.BootloaderInfo(), version: .v1) }
        #expect(v1?.returnCode == .notSupported)
    }

    @Test("console echo control is not supported by Zephyr")
    func consoleEcho() async throws {
        var client = try await TestClient()
        let error = await deviceError { _ = try await client.send(OSManagement.ConsoleEchoControl(echo: 1)) }
        #expect(error?.returnCode == .notSupported)
    }

    static let answers: [AnswerCase] = [
        AnswerCase(
            "echo",
            OSManagement.Echo(text: "hi"),
            [
                "bf",  // {_
                "6172626869",  //   "r": "hi"
                "ff",  // }
            ]
        ),
        AnswerCase(
            "task statistics",
            OSManagement.TaskStatistics(),
            [
                "bf",  // {_
                "657461736b73",  //   "tasks":
                "bf",  //   {_
                "6469646c65",  //     "idle":
                "bf",  //     {_
                "647072696f0f",  //       "prio": 15
                "6374696400",  //       "tid": 0
                "65737461746500",  //       "state": 0
                "6673746b73697a1850",  //       "stksiz": 80
                "6673746b75736510",  //       "stkuse": 16
                "6772756e74696d651903e8",  //       "runtime": 1000
                "66637377636e7401",  //       "cswcnt": 1
                "6c6c6173745f636865636b696e00",  //       "last_checkin": 0
                "6c6e6578745f636865636b696e00",  //       "next_checkin": 0
                "ff",  //     }
                "646d61696e",  //     "main":
                "bf",  //     {_
                "647072696f00",  //       "prio": 0
                "6374696401",  //       "tid": 1
                "65737461746500",  //       "state": 0
                "6673746b73697a190200",  //       "stksiz": 512
                "6673746b75736518bc",  //       "stkuse": 188
                "6772756e74696d651907d0",  //       "runtime": 2000
                "66637377636e7402",  //       "cswcnt": 2
                "6c6c6173745f636865636b696e00",  //       "last_checkin": 0
                "6c6e6578745f636865636b696e00",  //       "next_checkin": 0
                "ff",  //     }
                "68737973776f726b71",  //     "sysworkq":
                "bf",  //     {_
                "647072696f18ff",  //       "prio": 255
                "6374696402",  //       "tid": 2
                "65737461746500",  //       "state": 0
                "6673746b73697a190200",  //       "stksiz": 512
                "6673746b7573651882",  //       "stkuse": 130
                "6772756e74696d65190bb8",  //       "runtime": 3000
                "66637377636e7403",  //       "cswcnt": 3
                "6c6c6173745f636865636b696e00",  //       "last_checkin": 0
                "6c6e6578745f636865636b696e00",  //       "next_checkin": 0
                "ff",  //     }
                "68736d705f776f726b",  //     "smp_work":
                "bf",  //     {_
                "647072696f05",  //       "prio": 5
                "6374696403",  //       "tid": 3
                "65737461746500",  //       "state": 0
                "6673746b73697a190480",  //       "stksiz": 1152
                "6673746b757365190192",  //       "stkuse": 402
                "6772756e74696d65190fa0",  //       "runtime": 4000
                "66637377636e7404",  //       "cswcnt": 4
                "6c6c6173745f636865636b696e00",  //       "last_checkin": 0
                "6c6e6578745f636865636b696e00",  //       "next_checkin": 0
                "ff",  //     }
                "676c6f6767696e67",  //     "logging":
                "bf",  //     {_
                "647072696f0e",  //       "prio": 14
                "6374696404",  //       "tid": 4
                "65737461746500",  //       "state": 0
                "6673746b73697a18c0",  //       "stksiz": 192
                "6673746b7573651846",  //       "stkuse": 70
                "6772756e74696d65191388",  //       "runtime": 5000
                "66637377636e7405",  //       "cswcnt": 5
                "6c6c6173745f636865636b696e00",  //       "last_checkin": 0
                "6c6e6578745f636865636b696e00",  //       "next_checkin": 0
                "ff",  //     }
                "ff",  //   }
                "ff",  // }
            ]
        ),
        AnswerCase(
            "memory pools",
            OSManagement.MemoryPoolStatistics(),
            [
                "bf",  // {_
                "666d706f6f6c73",  //   "mpools":
                "bf",  //   {_
                "6c5f73797374656d5f68656170",  //     "_system_heap":
                "bf",  //     {_
                "66626c6b73697a01",  //       "blksiz": 1
                "656e626c6b73194000",  //       "nblks": 16384
                "656e66726565193000",  //       "nfree": 12288
                "636d696e192b00",  //       "min": 11008
                "ff",  //     }
                "ff",  //   }
                "ff",  // }
            ]
        ),
        AnswerCase(
            "parameters",
            OSManagement.MCUmgrParameters(),
            [
                "bf",  // {_
                "686275665f73697a65190800",  //   "buf_size": 2048
                "696275665f636f756e7404",  //   "buf_count": 4
                "ff",  // }
            ]
        ),
        AnswerCase(
            "application info",
            OSManagement.ApplicationInfo(format: "vs"),
            [
                "bf",  // {_
                "666f75747075746c5a657068797220332e342e30",  //   "output": "Zephyr 3.4.0"
                "ff",  // }
            ]
        ),
        AnswerCase(
            "bootloader name",
            on: .init(release: .latest),
            OSManagement.BootloaderInfo(),
            [
                "bf",  // {_
                "6a626f6f746c6f61646572674d4355626f6f74",  //   "bootloader": "MCUboot"
                "ff",  // }
            ]
        ),
        AnswerCase(
            "bootloader mode",
            on: .init(release: .latest),
            OSManagement.BootloaderInfo(query: "mode"),
            [
                "bf",  // {_
                "646d6f646503",  //   "mode": 3
                "ff",  // }
            ]
        ),
        AnswerCase(
            "bootloader mode and no-downgrade",
            on: .init(release: .latest, bootloaderMode: .overwriteOnly, downgradePrevention: true),
            OSManagement.BootloaderInfo(query: "mode"),
            [
                "bf",  // {_
                "646d6f646502",  //   "mode": 2
                "6c6e6f2d646f776e6772616465f5",  //   "no-downgrade": true
                "ff",  // }
            ]
        ),
    ]

    @Test("answers byte for byte as Zephyr's os_mgmt.c writes them", arguments: answers)
    func answerBytes(_ answer: AnswerCase) async throws {
        try await answer.check()
    }
}
