import ArgumentParser
import Foundation

/// Options every command accepts, before or after the subcommand (users type both).
///
/// swift-argument-parser only parses an option on the command that declares it, so every
/// leaf command includes these with `@OptionGroup`, and ``MCUmgrCommand/normalize(_:)`` moves
/// global options typed before the subcommand to the end of the argument list.
public struct GlobalOptions: ParsableArguments {
    /// The device to talk to.
    @Option(
        name: .customLong("conn"),
        help: ArgumentHelp(
            "The device: udp://HOST[:PORT], serial:///dev/PATH?baud=N, ble://NAME or sim:// (default: $MCUMGR_CONN).",
            valueName: "url"
        )
    )
    public var connection: String?

    /// A saved connection profile (see `mcumgr conn`).
    @Option(
        name: .customShort("c"),
        help: ArgumentHelp("A saved connection profile (mcumgr conn add NAME URL).", valueName: "profile"),
        completion: .custom { _, _, _ in (try? ProfileStore().load().map(\.name)) ?? [] }
    )
    public var profile: String?

    /// Seconds to wait for each answer.
    // `.unconditional`: `--timeout -1` reaches `validate()` and gets a range error, instead of
    // the parser taking `-1` for an option and saying the value is missing.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Seconds to wait for each answer (up to 3600).", valueName: "s")
    )
    public var timeout: Double = 3

    /// Attempts after a timeout.
    @Option(
        parsing: .unconditional,
        help: ArgumentHelp("Times a request is sent again after a timeout (0 to 100).", valueName: "n")
    )
    public var retries: Int = 3

    /// Print one JSON document (or one JSON object per line for long-running commands).
    @Flag(name: .long, help: "Print JSON on stdout and nothing else.")
    public var json = false

    /// Verbosity: `-v` for connection and retry decisions, `-vv` for every frame.
    @Flag(name: .shortAndLong, help: "More detail on stderr: -v decisions, -vv every frame.")
    public var verbose: Int

    public init() {}

    public mutating func validate() throws {
        if connection != nil && profile != nil {
            throw ValidationError("give either --conn URL or -c PROFILE, not both")
        }
        guard timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be between 0 and 3600 seconds")
        }
        guard (0...100).contains(retries) else { throw ValidationError("--retries must be between 0 and 100") }
    }

    /// The global options for `mcumgr --help`, as lines of at most 78 columns (the root command
    /// does not parse them itself, so the parser does not list them there, and it wraps longer
    /// lines without indenting them).
    static let helpLines: [String] = [
        "--conn <url>     The device: udp://HOST[:PORT], serial:///dev/PATH?baud=N,",
        "                 ble://NAME or sim:// (default: $MCUMGR_CONN).",
        "-c <profile>     A saved connection profile (mcumgr conn add NAME URL).",
        "--timeout <s>    Seconds to wait for each answer (default: 3; up to 3600).",
        "--retries <n>    Times a request is sent again after a timeout (default: 3;",
        "                 0 to 100).",
        "--json           Print JSON on stdout and nothing else.",
        "-v, --verbose    More detail on stderr: -v decisions, -vv every frame.",
    ]

    /// Global options that take a value, for moving them behind the subcommand.
    static let optionsWithValue: Set<String> = ["--conn", "-c", "--timeout", "--retries"]
    /// Global flags, for moving them behind the subcommand.
    static let flags: Set<String> = ["--json", "-v", "-vv", "-vvv", "--verbose"]
}

/// The options of the commands that work without a device (`decode`, `conn`, `image info`,
/// `simulator`, `bench`): `--json` only.
///
/// The client options are parsed too, hidden from `--help`, so that one typed before or after
/// such a command (``MCUmgrCommand/normalize(_:)`` moves it to the end either way) is refused
/// with a line naming the command, rather than ignored or reported as an unknown option.
public struct LocalOptions: ParsableArguments {
    /// Print one JSON document (one JSON object per line for the simulator's endpoints).
    @Flag(name: .long, help: "Print JSON on stdout and nothing else.")
    public var json = false

    // Parsed only to be refused; `String` so that any value reaches the refusal.
    @Option(name: .customLong("conn"), help: .hidden) var connection: String?
    @Option(name: .customShort("c"), help: .hidden) var profile: String?
    @Option(name: .customLong("timeout"), parsing: .unconditional, help: .hidden) var timeout: String?
    @Option(name: .customLong("retries"), parsing: .unconditional, help: .hidden) var retries: String?
    // None of these commands logs anything `-v` would show.
    @Flag(name: .shortAndLong, help: .hidden) var verbose: Int

    public init() {}

    /// Refuses the client options, which do nothing for a command that talks to no device.
    /// - Parameters:
    ///   - command: the command as typed after `mcumgr`, e.g. `image info`.
    ///   - reason: why the options do not apply.
    /// - Throws: `ValidationError` (exit status 64) naming the first client option given.
    func refuseClientOptions(command: String, reason: String = "it works without a device") throws {
        let given: [(name: String, present: Bool)] = [
            ("--conn", connection != nil), ("-c", profile != nil), ("--timeout", timeout != nil),
            ("--retries", retries != nil), ("-v", verbose > 0),
        ]
        if let option = given.first(where: \.present) {
            throw ValidationError("'mcumgr \(command)' takes no \(option.name): \(reason)")
        }
    }
}
