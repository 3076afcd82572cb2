import ArgumentParser
import Foundation
import MCUmgr
import MCUmgrDFU
import SMPBytes
import SMPCore
import SMPLink

/// The `mcumgr` command tree: manage and update devices that speak MCUmgr's SMP protocol.
public struct MCUmgrCommand: AsyncParsableCommand {
    /// The tool's version, printed by `mcumgr --version`.
    public static let version = "0.1.0"

    public static let configuration = CommandConfiguration(
        commandName: "mcumgr",
        abstract: "Manage and update devices that speak MCUmgr's SMP protocol (Zephyr, nRF Connect SDK, MCUboot).",
        discussion: helpDiscussion,
        version: version,
        subcommands: [
            DecodeCommand.self, ConnCommand.self, ImageCommand.self, OSCommand.self, StatCommand.self,
            SettingsCommand.self, FSCommand.self, ShellCommand.self, EnumCommand.self, LogCommand.self,
            CrashCommand.self, RunCommand.self, BasicCommand.self, SUITCommand.self, UpgradeCommand.self,
            SimulatorCommand.self, BenchCommand.self, FleetCommand.self, BLECommand.self, UICommand.self,
        ]
    )

    public init() {}

    /// What `mcumgr --help` says beyond the command list: the global options (every command
    /// that talks to a device takes them, but swift-argument-parser lists an option only under
    /// the command declaring it), the JSON conventions and the exit statuses.
    static var helpDiscussion: String {
        let options = GlobalOptions.helpLines.map { "  " + $0 }.joined(separator: "\n")
        let statuses = ExitStatus.helpLines.map { "  " + $0 }.joined(separator: "\n")
        return """
            GLOBAL OPTIONS (before or after the command; decode, conn, image info,
            simulator and bench talk to no device and take only --json; ble scan
            takes --json and its own --timeout, the seconds it scans):
            \(options)

            JSON: with --json a command prints one JSON document on stdout (long-running
            ones: one object per line), keys in snake_case. A command that fails prints,
            as its last line, {"error": {"status": N, "kind": K, "message": "..."}},
            K being device_refused or failed (1), link, transfer or protocol (2),
            upgrade_outcome (3), usage (64), bad_input (65), unreadable_input (66),
            interrupted (130).

            EXIT STATUS (and one line on stderr saying what failed):
            \(statuses)
            """
    }

    /// Runs the tool with arguments (without the program name) and returns the exit status.
    ///
    /// Errors become one line on stderr and a non-zero status; help and version go to stdout.
    /// - Parameter arguments: the command line after the program name.
    /// - Returns: the process exit status.
    public static func main(arguments: [String]) async -> Int32 {
        let normalized = normalize(arguments)
        if let script = CompletionScript.requested(in: arguments) {
            Console.out(script)
            return 0
        }
        if let completions = CompletionScript.customCompletions(for: arguments) {
            if !completions.isEmpty { Console.out(completions) }
            return 0
        }
        do {
            if let mistyped = unknownCommand(in: normalized) { throw mistyped }
            // A group named without its verb shows the group's help, whatever global options
            // come with it (the group itself declares none, so the parser would call them unknown).
            var command = try parseAsRoot(groupWithoutVerb(normalized) ?? normalized)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return 0
        } catch {
            // Help and --version come here too, as swift-argument-parser's clean exits: they go
            // to stdout and are no failure.
            if !isFailure(error) {
                Console.out(fullMessage(for: error))
                return 0
            }
            let report = FailureReport(error)
            Console.err("error: " + report.message)
            if wantsJSON(normalized) { CommandSupport.emit(report.json) }
            return report.status.rawValue
        }
    }

    /// Whether an error is a failure (not a request for help or the version).
    static func isFailure(_ error: any Error) -> Bool {
        // The parser maps every error it does not know to failure and its clean exits to success
        // — and a cancellation to success too, which for an interrupted transfer it is not.
        if error is CancellationError { return true }
        return exitCode(for: error) != .success
    }

    /// Whether the command line asks for JSON: `--json` before any `--` (after it, the words
    /// belong to a shell command). Read from the raw words so that a command line the parser
    /// refuses still gets its error object.
    static func wantsJSON(_ arguments: [String]) -> Bool {
        arguments.prefix { $0 != "--" }.contains("--json")
    }

    /// A usage error naming the nearest command when a word where a command belongs is none of
    /// them (swift-argument-parser only says "unexpected argument").
    /// - Parameter arguments: the normalized arguments.
    /// - Returns: the error, or `nil` when the command path is fine (or not ours to judge).
    static func unknownCommand(in arguments: [String]) -> ValidationError? {
        var command: any ParsableCommand.Type = MCUmgrCommand.self
        var path = ["mcumgr"]
        for argument in arguments {
            let subcommands = command.configuration.subcommands
            // Options, a leaf command's arguments, and a group with a default command (whose
            // arguments may follow directly) are the parser's business.
            guard !argument.hasPrefix("-"), !subcommands.isEmpty, command.configuration.defaultSubcommand == nil,
                argument != "help"
            else { return nil }
            if let next = subcommands.first(where: { $0._commandName == argument }) {
                command = next
                path.append(argument)
                continue
            }
            let names = subcommands.map { $0._commandName }
            let nearest = names.map { (name: $0, distance: editDistance($0, argument)) }
                .min { $0.distance < $1.distance }
            let context = path.joined(separator: " ")
            if let nearest, nearest.distance <= max(2, argument.count / 3) {
                return ValidationError(
                    "'\(argument)' is not a command of \(context); did you mean '\(nearest.name)'?"
                )
            }
            return ValidationError(
                "'\(argument)' is not a command of \(context); the commands are: \(names.joined(separator: ", "))"
            )
        }
        return nil
    }

    /// The command path, when the words name a group (a command with subcommands and no
    /// default one) followed only by global options: `mcumgr --conn URL image` is `mcumgr image`,
    /// which shows the group's help.
    /// - Parameter arguments: the normalized arguments.
    /// - Returns: the group's path, or `nil` when a verb, an argument or another option follows.
    static func groupWithoutVerb(_ arguments: [String]) -> [String]? {
        var command: any ParsableCommand.Type = MCUmgrCommand.self
        var path: [String] = []
        var rest = arguments[...]
        while let word = rest.first,
            let next = command.configuration.subcommands.first(where: { $0._commandName == word })
        {
            command = next
            path.append(word)
            rest = rest.dropFirst()
        }
        guard !path.isEmpty, !command.configuration.subcommands.isEmpty, command.configuration.defaultSubcommand == nil
        else { return nil }
        while let word = rest.first {
            let name = word.split(separator: "=", maxSplits: 1).first.map(String.init) ?? word
            if GlobalOptions.flags.contains(word) {
                rest = rest.dropFirst()
            } else if GlobalOptions.optionsWithValue.contains(name) {
                rest = rest.dropFirst(word.contains("=") ? 1 : 2)
            } else {
                return nil
            }
        }
        return path
    }

    /// Levenshtein distance, for suggesting the nearest command name.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.lowercased())
        let b = Array(b.lowercased())
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }

    /// Runs the tool in-process and captures what it prints (for tests).
    /// - Parameters:
    ///   - arguments: the command line after the program name.
    ///   - stdin: what standard input holds (empty by default, never the process's own).
    /// - Returns: exit status, stdout and stderr.
    public static func run(arguments: [String], stdin: Data = Data()) async -> (
        status: Int32, stdout: String, stderr: String
    ) {
        // Written from whatever task prints.
        let out = Locked<[String]>([])
        let err = Locked<[String]>([])
        let status = await Console.$output.withValue(Console.Sink { line in out.withLock { $0.append(line) } }) {
            await Console.$error.withValue(Console.Sink { line in err.withLock { $0.append(line) } }) {
                await Console.$input.withValue(Console.Source { stdin }) {
                    await main(arguments: arguments)
                }
            }
        }
        let text = { (lines: Locked<[String]>) in lines.withLock { $0.map { $0 + "\n" }.joined() } }
        return (status, text(out), text(err))
    }

    /// Moves global options that appear before the subcommand path to its end, so that
    /// `mcumgr --json decode X` and `mcumgr decode X --json` mean the same.
    /// - Parameter arguments: the raw arguments.
    /// - Returns: the arguments with leading global options moved to the end.
    static func normalize(_ arguments: [String]) -> [String] {
        var moved: [String] = []
        var rest: [String] = []
        var index = 0
        var seenSubcommand = false
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                rest += arguments[index...]
                break
            }
            let name = argument.split(separator: "=", maxSplits: 1).first.map(String.init) ?? argument
            if !seenSubcommand && GlobalOptions.flags.contains(argument) {
                moved.append(argument)
            } else if !seenSubcommand && GlobalOptions.optionsWithValue.contains(name) {
                moved.append(argument)
                if !argument.contains("="), index + 1 < arguments.count {
                    index += 1
                    moved.append(arguments[index])
                }
            } else {
                if !argument.hasPrefix("-") { seenSubcommand = true }
                rest.append(argument)
            }
            index += 1
        }
        if let separator = rest.firstIndex(of: "--") {
            rest.insert(contentsOf: moved, at: separator)
            return rest
        }
        return rest + moved
    }

    /// The first line of swift-argument-parser's message for an error, without its `Error: `
    /// prefix: argument errors come with usage text, and the first line names the problem.
    static func parserMessage(for error: any Error) -> String {
        let text = fullMessage(for: error)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        let first = lines.first.map(String.init) ?? "\(error)"
        return first.hasPrefix("Error: ") ? String(first.dropFirst(7)) : first
    }
}
