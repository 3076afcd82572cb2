import Logging

/// Writes log records as single lines through ``Console/err(_:)``: `[debug] label: message key=value`.
///
/// The CLI builds its loggers with this handler at the level chosen by `-v`/`-vv` instead of
/// bootstrapping the global logging system, so in-process tests can run many commands, each
/// with its own verbosity and captured output.
struct StderrLogHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        let details = merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        Console.err("[\(event.level)] \(label): \(event.message)" + (details.isEmpty ? "" : " " + details))
    }

    /// A logger for a component at the verbosity the user asked for.
    /// - Parameters:
    ///   - label: the component, e.g. `mcumgr.client`.
    ///   - verbosity: the number of `-v` flags.
    static func logger(_ label: String, verbosity: Int) -> Logger {
        let level: Logger.Level =
            switch verbosity {
            case 0: .warning
            case 1: .debug
            default: .trace
            }
        return Logger(label: label) { label in StderrLogHandler(label: label, logLevel: level) }
    }
}
