import ArgumentParser
import Foundation
import MCUmgr
import SMPBytes
import SMPCore

/// `mcumgr log …`: the log group (4), Apache Mynewt only.
struct LogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "log",
        abstract: "Logs (Apache Mynewt): show, clear, list, modules, levels.",
        subcommands: [Show.self, Clear.self, List.self, Modules.self, Levels.self]
    )

    struct Show: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show log entries.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The log to show (default: all).") var name: String?
        @Option(help: "Only entries from this index on.") var index: UInt32?
        @Option(help: "Only entries from this timestamp on (microseconds).") var timestamp: Int64?

        func run() async throws {
            let response = try await CommandContext.withClient(global) {
                try await $0.send(LogManagement.Show(logName: name, timestamp: timestamp, index: index))
            }
            if global.json {
                try CommandSupport.emit(response: response)
                return
            }
            for log in response.logs {
                Console.out("log \(log.name) (type \(log.type)), \(log.entries.count) entries")
                for entry in log.entries {
                    let text: String
                    switch entry.message {
                    case .text(let value): text = value
                    case .bytes(let bytes): text = Hex.encode(bytes)
                    }
                    Console.out(
                        "  [\(entry.index)] ts=\(entry.timestamp) module=\(entry.module) level=\(entry.level)  \(text)"
                    )
                }
            }
            Console.out("next index \(response.nextIndex)")
        }
    }

    struct Clear: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Clear the logs.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            _ = try await CommandContext.withClient(global) { try await $0.send(LogManagement.Clear()) }
            if global.json { CommandSupport.emit(.object([])) } else { Console.out("cleared the logs") }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the log names.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) { try await $0.send(LogManagement.List()) }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                for name in response.logNames { Console.out(name) }
            }
        }
    }

    struct Modules: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the log modules and their ids.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) { try await $0.send(LogManagement.ModuleList()) }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                for line in CommandSupport.table([], response.modules.map { [$0.name, "\($0.value)"] }) {
                    Console.out(line)
                }
            }
        }
    }

    struct Levels: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the log levels and their values.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) { try await $0.send(LogManagement.LevelList()) }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                for line in CommandSupport.table([], response.levels.map { [$0.name, "\($0.value)"] }) {
                    Console.out(line)
                }
            }
        }
    }
}

/// `mcumgr crash TYPE`: the crash group (5), Apache Mynewt only.
struct CrashCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "crash",
        abstract: "Make the device crash on purpose (Apache Mynewt): div0, jump0, ref0, assert, wdog."
    )
    @OptionGroup var global: GlobalOptions
    @Argument(help: "How to crash: div0, jump0, ref0, assert or wdog.") var type: String

    func run() async throws {
        let request = CrashManagement.Trigger(type: type)
        _ = try await CommandContext.withClient(global) { try await $0.send(request) }
        if global.json {
            try CommandSupport.emit(request: request)
        } else {
            Console.out("the device accepted the '\(type)' crash")
        }
    }
}

/// `mcumgr run test|list`: the run group (7), Apache Mynewt only.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run",
        abstract: "Run on-device tests (Apache Mynewt): test, list.",
        subcommands: [Test.self, List.self]
    )

    struct Test: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Run a test (or all tests with 'all').")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The test name, or all.") var name: String
        @Option(help: "A token the device writes to its log with the results.") var token: String?

        func run() async throws {
            let request = RunManagement.Test(testName: name, token: token)
            _ = try await CommandContext.withClient(global) { try await $0.send(request) }
            if global.json {
                try CommandSupport.emit(request: request)
            } else {
                Console.out("started test \(name); results go to the device's log")
            }
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the tests on the device.")
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let response = try await CommandContext.withClient(global) { try await $0.send(RunManagement.List()) }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                for name in response.testNames { Console.out(name) }
            }
        }
    }
}
