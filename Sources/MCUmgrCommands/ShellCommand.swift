import ArgumentParser
import MCUmgr
import SMPCore

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
                Prints what the command wrote. A non-zero return code of the shell command is shown \
                on stderr ('ret N') but is not a failure of mcumgr: the exit status is 0 unless the \
                device refuses the request. Put the command after -- when it has options of its own \
                that mcumgr would take: mcumgr shell exec -- log --json.
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
            let response = try await CommandContext.withClient(global) {
                try await $0.send(ShellManagement.Execute(arguments: words))
            }
            if global.json {
                var members: [(String, JSONValue)] = [("o", .string(response.output))]
                if let ret = response.returnCode { members.append(("ret", .int(Int64(ret)))) }
                CommandSupport.emit(.object(members))
                return
            }
            CommandSupport.emitText(response.output)
            if let ret = response.returnCode, ret != 0 { Console.err("ret \(ret)") }
        }
    }
}
