import Foundation
import SMPPOSIX

/// The connection URLs `mcumgr ui` used most recently, kept in `recent-devices.json` beside the
/// saved profiles, so the page lists them again after a restart.
struct RecentDevices: Sendable {
    /// The file.
    let file: URL

    /// The list in a directory.
    /// - Parameter directory: the profiles' directory (`ProfileStore`'s).
    init(directory: URL) {
        file = directory.appendingPathComponent("recent-devices.json")
    }

    /// The URLs, most recent first; none when the file is missing or not a JSON array of strings
    /// (a convenience list is not worth an error).
    func load() -> [String] {
        guard FileManager.default.fileExists(atPath: file.path), let data = try? LocalFile.read(file) else { return [] }
        return (try? JSONDecoder().decode([String].self, from: data)) ?? []
    }

    /// Replaces the list; a directory that cannot be written leaves the list for this run only.
    /// - Parameter urls: most recent first.
    func save(_ urls: [String]) {
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try? JSONEncoder().encode(urls).write(to: file, options: .atomic)
    }
}
