import ArgumentParser
import Foundation
import MCUmgr
import SMPCore

/// `mcumgr os …`: the OS / default management group (0).
struct OSCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "os",
        abstract: "OS management: echo, reset, params, info, bootloader, taskstat, mpstat, datetime.",
        subcommands: [
            Echo.self, Reset.self, Params.self, Info.self, Bootloader.self, TaskStat.self, MPStat.self,
            DateTime.self,
        ]
    )

    struct Echo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Send text; the device answers with the same text.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The text to echo.") var text: String

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(OSManagement.Echo(text: text))
            }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                Console.out(response.text)
            }
        }
    }

    struct Reset: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Reset the device.",
            discussion: "The device answers before it resets. --boot-mode 1 asks for the bootloader (serial recovery)."
        )
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Reset even if the application refused an earlier reset (busy).") var force = false
        @Option(name: .customLong("boot-mode"), help: "Boot mode after the reset (1 = bootloader; Zephyr ≥ 4.2).")
        var bootMode: UInt8?

        func run() async throws {
            _ = try await CommandContext.withClient(global) {
                try await $0.send(OSManagement.Reset(force: force ? true : nil, bootMode: bootMode))
            }
            if global.json {
                CommandSupport.emit(.object([]))
            } else {
                Console.out(
                    bootMode.map { "the device is resetting into boot mode \($0)" } ?? "the device is resetting"
                )
            }
        }
    }

    struct Params: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the device's SMP buffer size and count (buf_size, buf_count)."
        )
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(OSManagement.MCUmgrParameters())
            }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                Console.out("buf_size   \(response.bufferSize)")
                Console.out("buf_count  \(response.bufferCount)")
            }
        }
    }

    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show OS/application information, like uname.",
            discussion: """
                --format letters: s kernel name, n node name, r kernel release, v kernel version, \
                b build date and time, m machine, p processor, i hardware platform, o operating system, \
                a all. The device prints fields in a fixed order whatever the order of the letters.
                """
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "Which fields, as letters (default: the device's, usually s).") var format: String?

        func validate() throws {
            if let format, format.isEmpty || !format.allSatisfy({ "snrvbmpioa".contains($0) }) {
                throw ValidationError("--format takes letters from snrvbmpioa, e.g. --format a")
            }
        }

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(OSManagement.ApplicationInfo(format: format))
            }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                Console.out(response.output)
            }
        }
    }

    struct Bootloader: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the bootloader's name, or answer a query (--query mode: MCUboot's upgrade mode)."
        )
        @OptionGroup var global: GlobalOptions
        @Option(help: "A bootloader query, e.g. mode.") var query: String?

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(OSManagement.BootloaderInfo(query: query))
            }
            if global.json {
                // Hand-shaped in one key: the wire's `no-downgrade` becomes snake_case, as every
                // JSON key.
                CommandSupport.emit(try JSONValue(encoding: response).renamingKeys(["no-downgrade": "no_downgrade"]))
                return
            }
            if let name = response.bootloader { Console.out(name) }
            if let mode = response.mode { Console.out("mode \(mode.rawValue) (\(mode))") }
            if response.noDowngrade == true { Console.out("no-downgrade: downgrades are refused") }
            if response.bootloader == nil && response.mode == nil {
                Console.out("the device answered the query '\(query ?? "")' with nothing we know")
            }
        }
    }

    struct TaskStat: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "taskstat",
            abstract: "Show the device's tasks (threads): priority, state, stack use, context switches."
        )
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(OSManagement.TaskStatistics())
            }
            if global.json {
                try CommandSupport.emit(response: response)
                return
            }
            guard !response.tasks.isEmpty else {
                Console.out("no tasks reported")
                return
            }
            func text(_ value: UInt64?) -> String { value.map { "\($0)" } ?? "-" }
            let rows = response.tasks.map { entry -> [String] in
                let task = entry.value
                return [
                    entry.name, "\(task.priority)", "\(task.id)", "\(task.state)", text(task.stackUsed),
                    text(task.stackSize), text(task.contextSwitches), text(task.runtime),
                ]
            }
            for line in CommandSupport.table(
                ["task", "prio", "tid", "state", "stkuse", "stksiz", "cswcnt", "runtime"],
                rows,
                rightAligned: [1, 2, 3, 4, 5, 6, 7]
            ) {
                Console.out(line)
            }
        }
    }

    struct MPStat: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mpstat",
            abstract: "Show the device's memory pools: block size, blocks, free, minimum free."
        )
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(OSManagement.MemoryPoolStatistics())
            }
            if global.json {
                try CommandSupport.emit(response: response)
                return
            }
            guard !response.pools.isEmpty else {
                Console.out("no memory pools reported")
                return
            }
            let rows = response.pools.map { entry -> [String] in
                let pool = entry.value
                return [
                    entry.name, pool.blockSize.map { "\($0)" } ?? "-", "\(pool.blockCount)", "\(pool.freeBlocks)",
                    pool.minimumFreeBlocks.map { "\($0)" } ?? "-",
                ]
            }
            for line in CommandSupport.table(
                ["pool", "blksiz", "nblks", "nfree", "min"],
                rows,
                rightAligned: [1, 2, 3, 4]
            ) {
                Console.out(line)
            }
        }
    }

    struct DateTime: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "datetime",
            abstract: "Read the device's clock, or set it: datetime [get | set ISO8601 | set now].",
            subcommands: [Get.self, SetClock.self],
            defaultSubcommand: Get.self
        )

        struct Get: AsyncParsableCommand {
            static let configuration = CommandConfiguration(abstract: "Read the device's date and time.")
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let response = try await CommandContext.withClient(global) {
                    try await $0.send(OSManagement.DateTimeRead())
                }
                if global.json {
                    try CommandSupport.emit(response: response)
                } else {
                    Console.out(response.dateTime)
                }
            }
        }

        struct SetClock: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "set",
                abstract: "Set the device's date and time.",
                discussion: """
                    Give yyyy-MM-ddTHH:mm:ss, optionally with a fraction (.SSSSSS) and a zone \
                    (+01:00), or 'now' for this computer's clock in UTC.
                    """
            )
            @OptionGroup var global: GlobalOptions
            @Argument(help: "The date and time, e.g. 2026-11-22T16:00:00, or 'now'.") var value: String

            /// The text sent to the device.
            var dateTime: String {
                guard value.lowercased() == "now" else { return value }
                let formatter = DateFormatter()
                formatter.locale = Locale(identifier: "en_US_POSIX")
                formatter.timeZone = TimeZone(identifier: "UTC")
                formatter.dateFormat = "yyyy-MM-dd'T'HH:mm:ss"
                return formatter.string(from: Date())
            }

            func validate() throws {
                guard value.lowercased() != "now" else { return }
                let pattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:?\d{2})?$"#
                guard value.range(of: pattern, options: .regularExpression) != nil else {
                    throw ValidationError("'\(value)' is not a date and time like 2026-11-22T16:00:00 (or 'now')")
                }
            }

            func run() async throws {
                let text = dateTime
                let request = OSManagement.DateTimeWrite(dateTime: text)
                _ = try await CommandContext.withClient(global) { try await $0.send(request) }
                if global.json {
                    try CommandSupport.emit(request: request)
                } else {
                    Console.out("set the device's clock to \(text)")
                }
            }
        }
    }
}
