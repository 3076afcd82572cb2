import ArgumentParser
import MCUmgr
import SMPCore
import SMPLink

/// `mcumgr shell exec ARGS...`: the shell group (9).
struct ShellCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Run a command in the device's shell.",
        subcommands: [Exec.self]
    )

    struct Exec: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run a shell command on the device and print its output.",
            discussion: """
                Prints what the command wrote, then exits with status 1 when the shell command's \
                return code ('ret') is not zero (its output is printed either way). Put the command \
                after -- when it has options of its own that mcumgr would take: \
                mcumgr shell exec -- log --json. A command longer than the device's buffer is \
                refused before it is sent (status 65).
                """
        )
        @OptionGroup var global: GlobalOptions
        @Argument(parsing: .allUnrecognized, help: "The command and its arguments.") var arguments: [String] = []

        func validate() throws {
            let words = arguments.filter { $0 != "--" }
            guard !words.isEmpty else {
                throw ValidationError("give the shell command to run, e.g. mcumgr shell exec kernel version")
            }
        }

        func run() async throws {
            let words = arguments.filter { $0 != "--" }
            let response: ShellManagement.Execute.Response
            do {
                response = try await CommandContext.withClient(global) {
                    try await $0.send(ShellManagement.Execute(arguments: words))
                }
            } catch let error as SMPTransportError where error.code == .frameTooLarge {
                throw RequestTooLarge(error, what: "the shell command")
            } catch let error as SMPError where error.code == .frameTooLarge {
                throw RequestTooLarge(error, what: "the shell command")
            }
            if global.json {
                try CommandSupport.emit(response: response)
            } else {
                CommandSupport.emitText(response.output)
            }
            if let line = response.failureLine(command: words.joined(separator: " ")) {
                throw ShellCommandFailed(description: line)
            }
        }
    }
}

/// A shell command that ran on the device and returned non-zero: exit status 1, like a shell
/// running it locally would report failure. Its line is the group's
/// (`ShellManagement.Execute.Response.failureLine(command:)`, shared with the web page's Shell).
struct ShellCommandFailed: Error, CustomStringConvertible {
    var description: String
}
