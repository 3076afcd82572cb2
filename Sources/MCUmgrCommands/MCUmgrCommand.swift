import ArgumentParser
import Foundation
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPLink

/// The `mcumgr` command tree: manage and update devices that speak MCUmgr's SMP protocol.
public struct MCUmgrCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "mcumgr",
        abstract: "Manage and update devices that speak MCUmgr's SMP protocol (Zephyr, nRF Connect SDK, MCUboot).",
        subcommands: [
            DecodeCommand.self, ConnCommand.self, ImageCommand.self, OSCommand.self, StatCommand.self,
            SettingsCommand.self, FSCommand.self, ShellCommand.self, EnumCommand.self, LogCommand.self,
            CrashCommand.self, RunCommand.self, BasicCommand.self, SUITCommand.self, UpgradeCommand.self,
            SimulatorCommand.self, BenchCommand.self,
        ]
    )

    public init() {}

    /// Runs the tool with arguments (without the program name) and returns the exit status.
    ///
    /// Errors become one line on stderr and a non-zero status; help and version go to stdout.
    /// - Parameter arguments: the command line after the program name.
    /// - Returns: the process exit status.
    public static func main(arguments: [String]) async -> Int32 {
        do {
            var command = try parseAsRoot(normalize(arguments))
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return 0
        } catch let error as SMPDeviceError {
            Console.err("error: " + describe(error))
            return status(for: error)
        } catch let error as SMPTransportError {
            Console.err("error: " + describe(error))
            return status(for: error)
        } catch let error as SMPTransferError {
            Console.err("error: " + describe(error))
            return status(for: error)
        } catch let error as SMPError {
            Console.err("error: " + describe(error))
            return status(for: error)
        } catch let error as FirmwareUpgradeError {
            Console.err("error: " + describe(error))
            return status(for: error)
        } catch let error as InputFileError {
            Console.err("error: " + describe(error))
            return status(for: error)
        } catch {
            let code = exitCode(for: error)
            if code == .success {
                Console.out(fullMessage(for: error))
            } else {
                Console.err(oneLineMessage(for: error))
            }
            return code.rawValue
        }
    }

    /// Runs the tool in-process and captures what it prints (for tests).
    /// - Parameter arguments: the command line after the program name.
    /// - Returns: exit status, stdout and stderr.
    public static func run(arguments: [String]) async -> (status: Int32, stdout: String, stderr: String) {
        let out = LineCollector()
        let err = LineCollector()
        let status = await Console.$output.withValue(Console.Sink(write: out.append)) {
            await Console.$error.withValue(Console.Sink(write: err.append)) {
                await main(arguments: arguments)
            }
        }
        return (status, out.text, err.text)
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

    /// One line for stderr: what failed and, where we know it, what to try.
    static func oneLineMessage(for error: any Error) -> String {
        let text = fullMessage(for: error)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: true)
        // Argument errors come with usage text; the first line names the problem.
        let first = lines.first.map(String.init) ?? "\(error)"
        return first.hasPrefix("Error: ") ? "error: " + first.dropFirst(7) : "error: " + first
    }
}

private final class LineCollector: @unchecked Sendable {
    // Guarded by `lock`; written from whatever task prints.
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return lines.map { $0 + "\n" }.joined()
    }
}
