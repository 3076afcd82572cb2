import ArgumentParser

/// Options every command accepts, before or after the subcommand (users type both).
///
/// swift-argument-parser only parses an option on the command that declares it, so every
/// leaf command includes these with `@OptionGroup`, and ``MCUmgrCommand/normalize(_:)`` moves
/// global options typed before the subcommand to the end of the argument list.
public struct GlobalOptions: ParsableArguments {
    /// Print one JSON document (or one JSON object per line for long-running commands).
    @Flag(name: .long, help: "Print JSON on stdout and nothing else.")
    public var json = false

    /// Verbosity: `-v` for connection and retry decisions, `-vv` for every frame.
    @Flag(name: .shortAndLong, help: "More detail on stderr: -v decisions, -vv every frame.")
    public var verbose: Int

    public init() {}

    /// Global options that take a value, for moving them behind the subcommand.
    static let optionsWithValue: Set<String> = ["--conn", "-c", "--timeout", "--retries"]
    /// Global flags, for moving them behind the subcommand.
    static let flags: Set<String> = ["--json", "-v", "-vv", "-vvv", "--verbose"]
}
