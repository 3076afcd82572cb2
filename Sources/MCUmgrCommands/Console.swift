import Foundation

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

        /// Creates a sink.
        /// - Parameter write: receives each line.
        public init(write: @escaping @Sendable (String) -> Void) {
            self.write = write
        }

        /// Standard output.
        public static let standardOutput = Sink { line in
            FileHandle.standardOutput.write(Data((line + "\n").utf8))
        }

        /// Standard error.
        public static let standardError = Sink { line in
            FileHandle.standardError.write(Data((line + "\n").utf8))
        }
    }

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
