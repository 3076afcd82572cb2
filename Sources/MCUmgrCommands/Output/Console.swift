import Foundation
import SMPBytes

/// Where commands write their output.
///
/// Commands never call `print` directly: they write through `Console`, whose sinks are
/// task-local so that tests run the command tree in-process and capture exactly what a user
/// would see on stdout and stderr.
public enum Console {
    /// A destination for lines of output.
    public struct Sink: Sendable {
        /// Receives one line (without its newline).
        public var write: @Sendable (String) -> Void
        /// Receives text that is not a whole line (a progress bar redrawn with `\r`); `nil` for
        /// sinks that only take lines.
        public var writePartial: (@Sendable (String) -> Void)?
        /// Whether the sink is a terminal, where a progress bar may be drawn.
        public var isTerminal: Bool

        /// Creates a sink.
        /// - Parameters:
        ///   - isTerminal: whether it is a terminal (captured output never is).
        ///   - writePartial: receives text that is not a whole line.
        ///   - write: receives each line.
        public init(
            isTerminal: Bool = false,
            writePartial: (@Sendable (String) -> Void)? = nil,
            write: @escaping @Sendable (String) -> Void
        ) {
            self.isTerminal = isTerminal
            self.writePartial = writePartial
            self.write = write
        }

        /// Standard output.
        public static let standardOutput = Sink(
            isTerminal: isatty(1) == 1,
            writePartial: { FileHandle.standardOutput.write(Data($0.utf8)) },
            write: { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) }
        )

        /// Standard error, where progress bars are drawn (see ``barAware(isTerminal:raw:)``).
        public static let standardError = barAware(isTerminal: isatty(2) == 1) {
            FileHandle.standardError.write(Data($0.utf8))
        }

        /// A sink for diagnostics that progress bars are drawn on: a line written while a bar
        /// is drawn first clears the bar's line, so an error (an interrupt, a failure
        /// mid-transfer) replaces the bar instead of landing after half of it.
        /// - Parameters:
        ///   - isTerminal: whether `raw` writes to a terminal.
        ///   - raw: writes text as it is (lines come with their newline).
        /// - Returns: the sink.
        public static func barAware(isTerminal: Bool, raw: @escaping @Sendable (String) -> Void) -> Sink {
            // Whether a partial line (a progress bar) is open.
            let barOpen = Locked(false)
            return Sink(
                isTerminal: isTerminal,
                writePartial: { text in
                    barOpen.withLock { $0 = !text.hasSuffix("\n") }
                    raw(text)
                },
                write: { line in
                    // Taken and cleared at once: the bar's line is cleared once.
                    let wasOpen = barOpen.withLock { open in
                        defer { open = false }
                        return open
                    }
                    let clear = wasOpen ? "\r\u{1B}[K" : ""
                    raw(clear + line + "\n")
                }
            )
        }
    }

    /// A source of standard input (`mcumgr decode -`).
    public struct Source: Sendable {
        /// Reads everything until the end.
        public var readAll: @Sendable () -> Data

        /// Creates a source.
        /// - Parameter readAll: reads everything until the end.
        public init(readAll: @escaping @Sendable () -> Data) { self.readAll = readAll }

        /// Standard input.
        public static let standardInput = Source { FileHandle.standardInput.readDataToEndOfFile() }
    }

    /// Where commands read standard input from; task-local like the sinks, so tests supply it.
    @TaskLocal public static var input = Source.standardInput

    /// The sink for results.
    @TaskLocal public static var output = Sink.standardOutput
    /// The sink for diagnostics and errors.
    @TaskLocal public static var error = Sink.standardError

    /// Writes a line of results.
    /// - Parameter line: the text, without a trailing newline.
    public static func out(_ line: String) { output.write(line) }

    /// Writes a line of diagnostics.
    /// - Parameter line: the text, without a trailing newline.
    public static func err(_ line: String) { error.write(line) }
}
