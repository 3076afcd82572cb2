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
            ("sv", "Zephyr 4.2.0"),
            ("vs", "Zephyr 4.2.0"),
            ("a", "Zephyr zephyr v4.2.0-sim 4.2.0 Sun Nov 22 12:00:00 2026 posix native native_sim/native/64 Zephyr"),
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
}
