import Foundation
import MCUmgrConnect
import MCUmgrDFU

/// The next command to type, as the user would type it: `mcumgr` with the same `--conn` or `-c`
/// they gave (quoted for the shell where needed), and a note when the device is `sim://` without
/// a state folder, which is gone when the command ends so no next command can reach it.
struct CommandHints: Sendable {
    /// `mcumgr`, `mcumgr --conn URL` or `mcumgr -c PROFILE`.
    let prefix: String
    /// The device lives only as long as this command (`sim://` without `state_dir`).
    let forgetsDevice: Bool

    /// Hints for how the global options reached the device.
    init(_ global: GlobalOptions) {
        if let connection = global.connection {
            prefix = "mcumgr --conn \(Self.shellQuoted(connection))"
        } else if let profile = global.profile {
            prefix = "mcumgr -c \(Self.shellQuoted(profile))"
        } else {
            // MCUMGR_CONN (or nothing): the next command finds it the same way.
            prefix = "mcumgr"
        }
        let text = global.connection ?? ProcessInfo.processInfo.environment["MCUMGR_CONN"]
        if global.profile == nil, let text, case .simulator(let options)? = try? ConnectionURL(parsing: text) {
            forgetsDevice = options["state_dir"] == nil
        } else {
            forgetsDevice = false
        }
    }

    /// Hints for a device reached by its URL (`mcumgr ui`'s devices).
    /// - Parameter connection: the connection URL.
    init(connection: String) {
        prefix = "mcumgr --conn \(Self.shellQuoted(connection))"
        if case .simulator(let options)? = try? ConnectionURL(parsing: connection) {
            forgetsDevice = options["state_dir"] == nil
        } else {
            forgetsDevice = false
        }
    }

    /// A command line: `mcumgr [--conn URL] ARGUMENTS`.
    func command(_ arguments: String) -> String { "\(prefix) \(arguments)" }

    /// What to add after hints when no later command can reach the device.
    var simulatorNote: String? {
        forgetsDevice
            ? "sim:// forgets the device when the command ends; to keep it for the next command, use --conn 'sim://?state_dir=DIR'"
            : nil
    }

    /// What the next reset would do to each image in the way, and the commands that clear it
    /// (`ImageStateGuard`'s words, with this user's `--conn`).
    /// - Parameters:
    ///   - changes: what holds the slots.
    ///   - then: what to do after, e.g. "run the upgrade again".
    func waysOut(_ changes: [FirmwareUpgradePlan.PendingBootChange], then: String) -> String {
        ImageStateGuard.waysOut(changes, command: command, then: then)
    }

    /// `text` as one shell word: unchanged when it holds only safe characters, else in single
    /// quotes.
    static func shellQuoted(_ text: String) -> String {
        let safe = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_./:@%+=,"))
        if !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.isASCII && safe.contains($0) }) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
