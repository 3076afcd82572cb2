import Foundation
import Testing

@testable import MCUmgrCommands

/// Where the global options apply: every command that talks to a device takes them before or
/// after the command; the commands that talk to none (`decode`, `conn`, `image info`,
/// `simulator`, `bench`) take only `--json` and refuse the rest in one line.
@Suite struct GlobalOptionsTests {
    /// The commands without a device, each with arguments that would otherwise succeed (the
    /// simulator's missing key makes it fail at start-up with 66 rather than serve forever, should
    /// the refusal not come first).
    static let localCommands: [(command: String, arguments: [String])] = [
        ("decode", ["decode", "0a00000900000000a161646568656c6c6f"]),
        ("image info", ["image", "info", CLI.fixture("unsigned.bin")]),
        ("simulator", ["simulator", "--udp", "127.0.0.1:0", "--key", "/nonexistent/key.pem"]),
        ("conn show", ["conn", "show"]),
        ("conn add", ["conn", "add", "board", "udp://192.0.2.1"]),
        ("conn remove", ["conn", "remove", "board"]),
        ("bench ble", ["bench", "ble", "--profile", "fast", "--window", "1", "--size", "4096"]),
    ]

    /// The client options, as a user would type them, and the name the refusal gives.
    static let clientOptions: [(words: [String], name: String)] = [
        (["--conn", "sim://"], "--conn"), (["--conn=sim://"], "--conn"), (["-c", "board"], "-c"),
        (["--timeout", "5"], "--timeout"), (["--retries", "1"], "--retries"), (["-v"], "-v"),
        (["-vv"], "-v"), (["--verbose"], "-v"),
    ]

    /// Each client option, before the command and after it, is a usage error (64) in one line
    /// naming the command and the option; nothing is printed on stdout and nothing is served.
    @Test(arguments: localCommands.map(\.command))
    func clientOptionsAreRefused(_ command: String) async throws {
        let arguments = try #require(Self.localCommands.first { $0.command == command }).arguments
        await ConnCommandTests.withProfiles { profiles in
            for option in Self.clientOptions {
                for line in [option.words + arguments, arguments + option.words] {
                    let result = await CLI.run(line)
                    #expect(result.status == 64, "\(line): \(result.stderr)")
                    #expect(
                        result.stderr.hasPrefix("error: 'mcumgr \(command)' takes no \(option.name): "),
                        "\(line): \(result.stderr)"
                    )
                    CLI.expectOneErrorLine(result, "\(line)")
                    #expect(result.stdout == "", "\(line)")
                }
            }
            // A refused `conn add` saved nothing.
            #expect(!FileManager.default.fileExists(atPath: profiles.appendingPathComponent("profiles.json").path))
        }
    }

    /// With `--json` the refusal is also the error object, like every usage error.
    @Test func theRefusalIsAnErrorObjectWithJSON() async throws {
        let result = await CLI.run(["--json", "--timeout", "5", "decode", "00"])
        #expect(result.status == 64)
        let object = try CLI.json(try #require(CLI.lines(result.stdout).last))
        let error = try #require(object["error"] as? [String: Any])
        #expect(error["kind"] as? String == "usage")
        #expect(error["message"] as? String == "'mcumgr decode' takes no --timeout: it works without a device")
    }

    /// `--json`, which they do use, works before and after each of them; `--help` shows it and
    /// none of the client options.
    @Test(arguments: [
        ["decode"], ["image", "info"], ["simulator"], ["conn", "show"], ["conn", "add"], ["bench", "ble"], ["ui"],
    ])
    func helpShowsOnlyWhatTheyTake(_ command: [String]) async {
        let listed = await Self.listedOptions(command)
        #expect(listed.contains("--json"), "\(command): \(listed)")
        for option in ["--conn", "-c", "--timeout", "--retries", "-v,", "--verbose"] {
            #expect(!listed.contains(option), "\(command): \(listed)")
        }
    }

    /// The control for the test above: a command that talks to a device lists them all.
    @Test func deviceCommandsListTheClientOptions() async {
        let listed = await Self.listedOptions(["os", "echo"])
        #expect(Set(["--conn", "-c", "--timeout", "--retries", "--json", "-v,"]).isSubset(of: listed), "\(listed)")
    }

    /// The option names the OPTIONS section of a command's help lists (`  --json  Print…`,
    /// `  -c <profile>  …`, `  -v, --verbose  …`), first word of each.
    static func listedOptions(_ command: [String]) async -> [String] {
        let result = await CLI.run(command + ["--help"])
        #expect(result.status == 0)
        return CLI.lines(result.stdout).drop { $0 != "OPTIONS:" }.compactMap { line -> String? in
            guard line.hasPrefix("  -") else { return nil }
            return line.split(separator: " ").first.map(String.init)
        }
    }

    /// Shell completions (`mcumgr --generate-completion-script`, in the README) follow the same
    /// rule: `decode` completes `--json` and none of the client options, `os echo` all of them.
    @Test func completionsOfferWhatEachCommandTakes() async {
        let result = await CLI.run(["--generate-completion-script", "bash"])
        #expect(result.status == 0)
        /// A completion function's body, `NAME() {` to its closing `}`.
        func body(_ name: String) -> String {
            CLI.lines(result.stdout).drop { $0 != "\(name)() {" }.prefix { $0 != "}" }.joined(separator: "\n")
        }
        let decode = body("_mcumgr_decode")
        let echo = body("_mcumgr_os_echo")
        #expect(decode.contains("--json"), "\(decode)")
        #expect(echo.contains("--json"), "\(echo)")
        for option in ["--conn", "--timeout", "--retries", "--verbose"] {
            #expect(!decode.contains(option), "\(decode)")
            #expect(echo.contains(option), "\(echo)")
        }
    }

    @Test func jsonBeforeOrAfterALocalCommandIsTheSame() async {
        let frame = "0a00000900000000a161646568656c6c6f"
        let before = await CLI.run(["--json", "decode", frame])
        let after = await CLI.run(["decode", frame, "--json"])
        #expect(before.status == 0)
        #expect(before.stdout == after.stdout)
        #expect(before.stdout.hasPrefix("{"))
    }

    /// Commands that talk to a device keep every global option, before or after the command.
    @Test func deviceCommandsTakeEveryGlobalOptionAnywhere() async {
        let options = ["--timeout", "5", "--retries", "1", "-v", "--json", "--conn", "sim://"]
        let before = await CLI.run(options + ["os", "echo", "hi"])
        let after = await CLI.run(["os", "echo", "hi"] + options)
        #expect(before.status == 0, "\(before.stderr)")
        #expect(before.stdout == "{\"r\":\"hi\"}\n")
        #expect(after.stdout == before.stdout)
    }
}
