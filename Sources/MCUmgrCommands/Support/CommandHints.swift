import Foundation
import MCUmgrConnect
import MCUmgrDFU
import SMPBytes

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

    /// A command line: `mcumgr [--conn URL] ARGUMENTS`.
    func command(_ arguments: String) -> String { "\(prefix) \(arguments)" }

    /// What to add after hints when no later command can reach the device.
    var simulatorNote: String? {
        forgetsDevice
            ? "sim:// forgets the device when the command ends; to keep it for the next command, use --conn 'sim://?state_dir=DIR'"
            : nil
    }

    /// What the next reset would do to each image in the way, that nothing was changed, and the
    /// commands that clear the way: confirm the running test image to keep it, or reset to let it
    /// revert (or to boot an image marked for the next boot, if that is what the user wants).
    /// - Parameters:
    ///   - changes: what holds the slots.
    ///   - then: what to do after, e.g. "run the upgrade again".
    func waysOut(_ changes: [FirmwareUpgradePlan.PendingBootChange], then: String) -> String {
        var ways: [String] = []
        for change in changes where change.kind == .revert {
            if let hash = change.runningHash {
                ways.append(
                    "keep \(change.runningVersion ?? "the running image") with `\(command("image confirm \(Hex.encode(hash))"))`"
                )
            }
        }
        if changes.contains(where: { $0.kind == .revert }) {
            ways.append("let it revert with `\(command("os reset"))`")
        }
        if changes.contains(where: { $0.kind != .revert }) {
            ways.append("boot it yourself with `\(command("os reset"))` if you mean to")
        }
        return changes.map(\.description).joined(separator: "; ") + "; nothing was changed: "
            + ways.joined(separator: ", or ") + ", then \(then)"
    }

    /// `text` as one shell word: unchanged when it holds only safe characters, else in single
    /// quotes.
    static func shellQuoted(_ text: String) -> String {
        let safe = CharacterSet.alphanumerics.union(CharacterSet(charactersIn: "-_./:@%+=,"))
        if !text.isEmpty, text.unicodeScalars.allSatisfy({ $0.isASCII && safe.contains($0) }) { return text }
        return "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }
}
