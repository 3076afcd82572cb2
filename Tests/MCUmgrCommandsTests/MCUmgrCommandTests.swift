import Foundation
import Testing

@testable import MCUmgrCommands

/// The root command: help, version, mistyped commands, options wherever they are typed.
@Suite struct MCUmgrCommandTests {
    /// `mcumgr --help` lists the global options (no command declares them for the parser to
    /// list at the root), the JSON conventions and the exit-status table, in 80 columns.
    @Test func helpListsGlobalOptionsAndExitStatuses() async {
        let result = await CLI.run(["--help"])
        #expect(result.status == 0)
        #expect(result.stderr == "")
        for option in ["--conn <url>", "-c <profile>", "--timeout <s>", "--retries <n>", "--json", "-v, --verbose"] {
            #expect(result.stdout.contains("\n  " + option), "\(option)")
        }
        for status in ExitStatus.allCases {
            #expect(
                result.stdout.contains(
                    "\n  \(String(status.rawValue).padding(toLength: 5, withPad: " ", startingAt: 0))"
                        + status.meaning + "\n"
                ),
                "\(status)"
            )
        }
        for (kind, _) in FailureReport.kinds { #expect(result.stdout.contains(kind), "\(kind)") }
        let long = CLI.lines(result.stdout).filter { $0.count > 80 }
        #expect(long == [])
    }

    /// A group named without its verb shows the group's help, whatever global options come
    /// with it: they belong to the verbs, and used to be called unknown here.
    @Test(arguments: [
        (["--conn", "sim://", "image"], ["image"]), (["image", "--json"], ["image"]),
        (["shell", "--conn", "sim://"], ["shell"]), (["-c", "board", "enum"], ["enum"]),
        (["--conn", "udp://x", "--timeout", "5", "-v", "image"], ["image"]), (["conn", "--json"], ["conn"]),
    ])
    func aGroupWithoutAVerbShowsItsHelp(_ arguments: [String], _ group: [String]) async {
        let help = await CLI.run(group)
        #expect(help.status == 0)
        #expect(help.stdout.hasPrefix("OVERVIEW: "))
        let result = await CLI.run(arguments)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr == "")
        #expect(result.stdout == help.stdout)
    }

    @Test func versionIsPrinted() async {
        let result = await CLI.run(["--version"])
        #expect(result.status == 0)
        #expect(result.stdout == MCUmgrCommand.version + "\n")
        #expect(result.stderr == "")
    }

    /// A mistyped command gets the nearest one (swift-argument-parser only says "unexpected
    /// argument"); a word near none gets the list.
    @Test(arguments: [
        (["imag", "list"], "error: 'imag' is not a command of mcumgr; did you mean 'image'?\n"),
        (["os", "ech", "hi"], "error: 'ech' is not a command of mcumgr os; did you mean 'echo'?\n"),
        (["settings", "raed", "a/b"], "error: 'raed' is not a command of mcumgr settings; did you mean 'read'?\n"),
        (["image", "lst", "--json"], "error: 'lst' is not a command of mcumgr image; did you mean 'list'?\n"),
        (
            ["frobnicate"],
            "error: 'frobnicate' is not a command of mcumgr; the commands are: decode, conn, image, os, stat, "
                + "settings, fs, shell, enum, log, crash, run, basic, suit, upgrade, simulator, bench, fleet, ble, ui\n"
        ),
    ])
    func aMistypedCommandSuggestsTheNearest(_ arguments: [String], _ message: String) async {
        let result = await CLI.sim(arguments: arguments)
        #expect(result.status == 64)
        #expect(result.stderr == message)
    }

    /// What must not be taken for a mistyped command: `help`, a group's default command with its
    /// argument (`stat NAME`), a leaf command's arguments.
    @Test func wordsThatAreNoCommandsAreLeftToTheParser() {
        #expect(MCUmgrCommand.unknownCommand(in: ["help", "image"]) == nil)
        #expect(MCUmgrCommand.unknownCommand(in: ["stat", "smp_svr_stats"]) == nil)
        #expect(MCUmgrCommand.unknownCommand(in: ["os", "echo", "imag"]) == nil)
        #expect(MCUmgrCommand.unknownCommand(in: ["shell", "exec", "kernel", "version"]) == nil)
        #expect(MCUmgrCommand.unknownCommand(in: ["--json", "imag"]) == nil)
    }

    @Test func helpOfAGroupStillWorks() async {
        let result = await CLI.run(["help", "image"])
        #expect(result.status == 0)
        #expect(result.stdout.contains("SUBCOMMANDS"))
    }

    /// Negative numbers get the range error, before or after the command (not "missing value").
    @Test(arguments: [
        (["--retries", "-1", "os", "echo", "hi"], "error: --retries must be between 0 and 100\n"),
        (["os", "echo", "hi", "--retries", "-1"], "error: --retries must be between 0 and 100\n"),
        (["--timeout", "-1", "os", "echo", "hi"], "error: --timeout must be between 0 and 3600 seconds\n"),
        (["os", "echo", "hi", "--timeout=-1"], "error: --timeout must be between 0 and 3600 seconds\n"),
        (["fs", "download", "/a", "/tmp/x", "--window", "-2"], "error: --window must be from 1 to 64\n"),
    ])
    func negativeNumbersGetRangeErrors(_ arguments: [String], _ message: String) async {
        let result = await CLI.sim(arguments: arguments)
        #expect(result.status == 64)
        #expect(result.stderr == message)
    }

    @Test func connAndProfileTogetherAreAUsageError() async {
        let result = await CLI.run(["--conn", "sim://", "-c", "board", "os", "echo", "hi"])
        #expect(result.status == 64)
        #expect(result.stderr == "error: give either --conn URL or -c PROFILE, not both\n")
        #expect(result.stdout == "")
    }
}
