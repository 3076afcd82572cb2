import ArgumentParser
import Foundation

/// Options every command accepts, before or after the subcommand (users type both).
///
/// swift-argument-parser only parses an option on the command that declares it, so every
/// leaf command includes these with `@OptionGroup`, and ``MCUmgrCommand/normalize(_:)`` moves
/// global options typed before the subcommand to the end of the argument list.
public struct GlobalOptions: ParsableArguments {
    /// The device to talk to.
    @Option(name: .customLong("conn"), help: "udp://HOST[:PORT], serial:///dev/PATH?baud=N, ble://NAME or sim://")
    public var connection: String?

    /// A saved connection profile (see `mcumgr conn`).
    @Option(name: .customShort("c"), help: "Use a saved connection profile.")
    public var profile: String?

    /// Seconds to wait for each answer.
    @Option(help: "Seconds to wait for each answer.")
    public var timeout: Double = 3

    /// Attempts after a timeout.
    @Option(help: "Times a request is sent again after a timeout.")
    public var retries: Int = 3

    /// Print one JSON document (or one JSON object per line for long-running commands).
    @Flag(name: .long, help: "Print JSON on stdout and nothing else.")
    public var json = false

    /// Verbosity: `-v` for connection and retry decisions, `-vv` for every frame.
    @Flag(name: .shortAndLong, help: "More detail on stderr: -v decisions, -vv every frame.")
    public var verbose: Int

    public init() {}

    public mutating func validate() throws {
        guard timeout > 0, timeout <= 3600 else {
            throw ValidationError("--timeout must be between 0 and 3600 seconds")
        }
        guard (0...100).contains(retries) else { throw ValidationError("--retries must be between 0 and 100") }
    }

    /// Global options that take a value, for moving them behind the subcommand.
    static let optionsWithValue: Set<String> = ["--conn", "-c", "--timeout", "--retries"]
    /// Global flags, for moving them behind the subcommand.
    static let flags: Set<String> = ["--json", "-v", "-vv", "-vvv", "--verbose"]
}
