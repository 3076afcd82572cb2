import Foundation
import MCUmgrCommands
import Testing

/// `mcumgr shell exec …` against the simulated device.
@Suite struct ShellCommandTests {
    @Test func printsTheOutput() async {
        let result = await CLI.sim("shell", "exec", "kernel", "version")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "Zephyr version 3.4.0\n")
        #expect(result.stderr == "")
    }

    /// A shell command that returns non-zero fails (status 1), like it would in a local shell;
    /// its output is printed all the same.
    @Test func aNonZeroReturnCodeIsAFailureAndTheOutputIsPrinted() async {
        let result = await CLI.sim("shell", "exec", "kernel")
        #expect(result.status == 1)
        #expect(result.stdout == "kernel - Kernel commands\nSubcommands:\n  uptime\n  version\n")
        #expect(result.stderr == "error: 'kernel' returned 1 on the device\n")
        let unknown = await CLI.sim("shell", "exec", "frobnicate")
        #expect(unknown.status == 1)
        #expect(unknown.stdout == "frobnicate: command not found\n")
        #expect(unknown.stderr == "error: 'frobnicate' returned -8 on the device\n")
    }

    /// Refused before it is sent: the shell command does not fit the device's buffer. Said in
    /// the user's terms (no request type names), with the sizes and what to do; status 65.
    @Test func anOversizeCommandIsRefusedWithTheSizes() async {
        let result = await CLI.sim(arguments: ["shell", "exec", "echo", String(repeating: "x", count: 3000)])
        #expect(result.status == 65)
        #expect(result.stdout == "")
        #expect(
            result.stderr
                == "error: the shell command is too large for the device: the request takes 3023 bytes and the "
                + "device accepts at most 2048 per request; shorten it\n"
        )
    }

    @Test func optionsOfTheShellCommandPassThrough() async {
        let result = await CLI.run(["--conn", "sim://", "shell", "exec", "echo", "-n", "a", "b"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "-n a b\n")
        let separated = await CLI.run(["--conn", "sim://", "shell", "exec", "--", "echo", "--json"])
        #expect(separated.status == 0, "\(separated.stderr)")
        #expect(separated.stdout == "--json\n")
    }

    @Test func jsonCarriesOutputAndReturnCodeThenTheError() async throws {
        let result = await CLI.sim("shell", "exec", "kernel", "--json")
        #expect(result.status == 1)
        let lines = try CLI.jsonLines(result.stdout)
        #expect(lines.count == 2)
        #expect(lines.first?["o"] as? String == "kernel - Kernel commands\nSubcommands:\n  uptime\n  version\n")
        #expect(lines.first?["ret"] as? Int == 1)
        let error = try #require(lines.last?["error"] as? [String: Any])
        #expect(error["status"] as? Int == 1)
        let success = await CLI.sim("shell", "exec", "kernel", "version", "--json")
        #expect(success.status == 0)
        #expect(try CLI.json(success.stdout)["ret"] as? Int == 0)
    }

    @Test func anEmptyCommandIsAUsageError() async {
        let result = await CLI.sim("shell", "exec")
        #expect(result.status == 64)
        #expect(result.stderr == "error: give the shell command to run, e.g. mcumgr shell exec kernel version\n")
    }
}
