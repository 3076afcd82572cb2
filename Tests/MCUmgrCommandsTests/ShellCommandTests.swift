import Foundation
import MCUmgrCommands
import Testing

/// `mcumgr shell exec …` against the simulated device.
@Suite struct ShellCommandTests {
    @Test func printsTheOutput() async {
        let result = await CLI.sim("shell", "exec", "kernel", "version")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "Zephyr version 4.2.0\n")
        #expect(result.stderr == "")
    }

    @Test func aNonZeroReturnCodeIsShownButIsNoFailure() async {
        let result = await CLI.sim("shell", "exec", "kernel")
        #expect(result.status == 0)
        #expect(result.stdout == "kernel - Kernel commands\nSubcommands:\n  uptime\n  version\n")
        #expect(result.stderr == "ret 1\n")
        let unknown = await CLI.sim("shell", "exec", "frobnicate")
        #expect(unknown.stdout == "frobnicate: command not found\n")
        #expect(unknown.stderr == "ret -8\n")
    }

    @Test func optionsOfTheShellCommandPassThrough() async {
        let result = await CLI.run(["--conn", "sim://", "shell", "exec", "echo", "-n", "a", "b"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "-n a b\n")
        let separated = await CLI.run(["--conn", "sim://", "shell", "exec", "--", "echo", "--json"])
        #expect(separated.status == 0, "\(separated.stderr)")
        #expect(separated.stdout == "--json\n")
    }

    @Test func jsonCarriesOutputAndReturnCode() async throws {
        let result = await CLI.sim("shell", "exec", "kernel", "--json")
        #expect(result.status == 0)
        let json = try CLI.json(result.stdout)
        #expect(json["o"] as? String == "kernel - Kernel commands\nSubcommands:\n  uptime\n  version\n")
        #expect(json["ret"] as? Int == 1)
    }

    @Test func anEmptyCommandIsAUsageError() async {
        let result = await CLI.sim("shell", "exec")
        #expect(result.status == 64)
        #expect(result.stderr == "error: give the shell command to run, e.g. mcumgr shell exec kernel version\n")
    }
}
