import Foundation
import SMPCBOR
import SMPCore

/// Group 0, OS management, as Zephyr's `os_mgmt.c` answers it.
enum OSHandler {
    static let group = HandlerGroup(
        group: .os,
        name: "os mgmt",
        routes: [
            Route(OSManagement.Echo.self) { request, _, _ throws(HandlerFailure) in try echo(request) },
            Route(OSManagement.Echo.self, operation: .read) { request, _, _ throws(HandlerFailure) in try echo(request)
            },
            Route(OSManagement.TaskStatistics.self) { _, device, _ in taskStatistics(device) },
            Route(OSManagement.MemoryPoolStatistics.self) { _, _, _ in memoryPools() },
            Route(OSManagement.DateTimeRead.self) { _, device, _ in dateTime(device) },
            Route(OSManagement.DateTimeWrite.self) { request, device, _ throws(HandlerFailure) in
                try setDateTime(request, device: &device)
            },
            Route(OSManagement.Reset.self) { request, device, effects throws(HandlerFailure) in
                try reset(request, device: &device, effects: &effects)
            },
            Route(OSManagement.MCUmgrParameters.self) { _, device, _ in parameters(device) },
            Route(OSManagement.ApplicationInfo.self) { request, device, _ throws(HandlerFailure) in
                try applicationInfo(request, device: device)
            },
            Route(OSManagement.BootloaderInfo.self) { request, device, _ throws(HandlerFailure) in
                try bootloaderInfo(request, device: device)
            },
        ]
    )

    /// Echo answers a read or a write; a missing `d` echoes the empty string, as zcbor's bulk
    /// decoder leaves it empty.
    static func echo(_ request: SMPServerRequest) throws(HandlerFailure) -> CBORMap {
        CBORMap(response: OSManagement.Echo.Response(text: try request.map().text("d") ?? ""))
    }

    static let threads: [(name: String, priority: Int, state: Int, stackSize: Int, stackUsed: Int)] = [
        ("idle", 15, 0, 80, 16), ("main", 0, 0, 512, 188), ("sysworkq", -1, 0, 512, 130),
        ("smp_work", 5, 0, 1_152, 402), ("logging", 14, 0, 192, 70),
    ]

    static func taskStatistics(_ device: DeviceCore) -> CBORMap {
        var tasks = SMPNamedValues<OSManagement.TaskStatistics.Task>()
        for (index, thread) in threads.enumerated() {
            let work = device.requestCount * (index + 1)
            let task = OSManagement.TaskStatistics.Task(
                // Without CONFIG_MCUMGR_GRP_OS_TASKSTAT_SIGNED_PRIORITY the priority goes out as
                // an unsigned byte.
                priority: thread.priority < 0 ? 256 + thread.priority : thread.priority,
                id: UInt64(index),
                state: UInt64(thread.state),
                stackUsed: UInt64(thread.stackUsed),
                stackSize: UInt64(thread.stackSize),
                contextSwitches: UInt64(clamping: work),
                runtime: UInt64(clamping: work * 1_000),
                lastCheckin: 0,
                nextCheckin: 0
            )
            tasks.entries.append(.init(name: thread.name, value: task))
        }
        return CBORMap(response: OSManagement.TaskStatistics.Response(tasks: tasks))
    }

    static func memoryPools() -> CBORMap {
        let heap = OSManagement.MemoryPoolStatistics.Pool(
            blockSize: 1,
            blockCount: 16_384,
            freeBlocks: 12_288,
            minimumFreeBlocks: 11_008
        )
        return CBORMap(response: OSManagement.MemoryPoolStatistics.Response(pools: ["_system_heap": heap]))
    }

    static func dateTime(_ device: DeviceCore) -> CBORMap {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: device.now)
        let text = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d",
            parts.year ?? 1970,
            parts.month ?? 1,
            parts.day ?? 1,
            parts.hour ?? 0,
            parts.minute ?? 0,
            parts.second ?? 0
        )
        return CBORMap(response: OSManagement.DateTimeRead.Response(dateTime: text))
    }

    /// Zephyr's parser: 19–25 characters, `yyyy-MM-ddTHH:mm:ss` with any single delimiters,
    /// each field range-checked; anything else is `EINVAL`.
    static func setDateTime(_ request: SMPServerRequest, device: inout DeviceCore) throws(HandlerFailure) -> CBORMap {
        guard let text = try request.map().text("datetime"), (19..<26).contains(text.utf8.count) else {
            throw .management(.invalidValue)
        }
        let bytes = Array(text.utf8)
        let ranges: [(Int, Int, ClosedRange<Int>)] = [
            (0, 4, 1900...11899), (5, 2, 1...12), (8, 2, 1...31), (11, 2, 0...23), (14, 2, 0...59), (17, 2, 0...59),
        ]
        var values: [Int] = []
        for (start, count, range) in ranges {
            let field = bytes[start..<start + count]
            guard field.allSatisfy({ (0x30...0x39).contains($0) }),
                let value = Int(String(decoding: field, as: UTF8.self)),
                range.contains(value)
            else { throw .management(.invalidValue) }
            values.append(value)
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(
            year: values[0],
            month: values[1],
            day: values[2],
            hour: values[3],
            minute: values[4],
            second: values[5]
        )
        // The RTC driver refuses a date that does not exist (30 February).
        guard let date = calendar.date(from: components),
            calendar.dateComponents([.day, .month], from: date) == DateComponents(month: values[1], day: values[2])
        else { throw .group(.os, OSManagement.ReturnCode.rtcCommandFailed.rawValue) }
        device.clockOffset = date.timeIntervalSince(Date())
        device.clockSet = true
        return CBORMap()
    }

    /// Reset answers first; the device resets after the response is sent. A decode failure is
    /// ignored (Zephyr: "since this is a core command").
    static func reset(
        _ request: SMPServerRequest,
        device: inout DeviceCore,
        effects: inout DeviceCore.Effects
    ) throws(HandlerFailure) -> CBORMap {
        let reset = try? request.frame.decodeRequest(as: OSManagement.Reset.self)
        // `boot_mode` is decoded as a 32-bit unsigned number on its own: a value above 255 is
        // refused, one that does not decode is ignored, as the rest of a reset's payload is.
        let bootMode = device.configuration.retentionBootMode ? try? request.map().unsigned("boot_mode") : nil
        if let bootMode, bootMode > UInt64(UInt8.max) { throw .management(.invalidValue) }
        if device.configuration.rejectResetUnlessForced && reset?.force != true {
            throw .management(.busy)
        }
        device.lastBootMode = reset?.bootMode
        if let bootMode { device.retainedBootMode = UInt8(bootMode) }
        effects.reset = true
        return CBORMap()
    }

    static func parameters(_ device: DeviceCore) -> CBORMap {
        CBORMap(
            response: OSManagement.MCUmgrParameters.Response(
                bufferSize: UInt32(clamping: device.configuration.bufferSize),
                bufferCount: UInt32(clamping: device.configuration.bufferCount)
            )
        )
    }

    /// Application info: letters in any order, fields in Zephyr's fixed order.
    static func applicationInfo(_ request: SMPServerRequest, device: DeviceCore) throws(HandlerFailure) -> CBORMap {
        let format = try request.decode(OSManagement.ApplicationInfo.self).format ?? ""
        let version = device.configuration.release.kernelVersion
        let order: [(letter: Character, value: String)] = [
            ("s", "Zephyr"), ("n", device.configuration.nodeName), ("r", "v\(version)-sim"), ("v", version),
            ("b", "Sun Nov 22 12:00:00 2026"), ("m", "posix"), ("p", "native"), ("i", "native_sim/native/64"),
            ("o", "Zephyr"),
        ]
        let valid = Set(order.map(\.letter) + ["a"])
        guard format.allSatisfy({ valid.contains($0) }) else {
            throw .group(.os, OSManagement.ReturnCode.invalidFormat.rawValue)
        }
        var letters = Set(format)
        if letters.contains("a") { letters = Set(order.map(\.letter)) }
        if letters.isEmpty { letters = ["s"] }
        let output = order.filter { letters.contains($0.letter) }.map(\.value).joined(separator: " ")
        return CBORMap(response: OSManagement.ApplicationInfo.Response(output: output))
    }

    /// Bootloader info: the name, or with `query: "mode"` the MCUboot mode and `no-downgrade`
    /// (sent only when true). Without a bootloader the command does not exist (`rc 8`), as on
    /// the observed server.
    static func bootloaderInfo(_ request: SMPServerRequest, device: DeviceCore) throws(HandlerFailure) -> CBORMap {
        guard device.configuration.hasBootloaderInfo else { throw .management(.notSupported) }
        let answer: OSManagement.BootloaderInfo.Response
        switch try request.decode(OSManagement.BootloaderInfo.self).query {
        case nil:
            answer = .init(bootloader: "MCUboot")
        case "mode"?:
            answer = .init(
                mode: .init(rawValue: device.configuration.bootloaderMode.mcubootModeValue),
                noDowngrade: device.configuration.reportsNoDowngrade ? true : nil
            )
        default:
            throw .group(.os, OSManagement.ReturnCode.queryYieldsNoAnswer.rawValue)
        }
        return CBORMap(response: answer)
    }
}
