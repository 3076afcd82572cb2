import Foundation
import SMPBytes
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
        write(urls, to: file)
    }

    /// Each device's paths on the Files screen: `[{"url": …, "paths": […]}]`, the device used
    /// last first, at most ``pathDevices`` devices.
    var pathsFile: URL { file.deletingLastPathComponent().appendingPathComponent("recent-paths.json") }

    /// The most devices whose paths are kept.
    static let pathDevices = 64

    private struct DevicePaths: Codable {
        var url: String
        var paths: [String]
    }

    /// A device's paths, most recent first; none when the file is missing or not what this
    /// writes.
    /// - Parameter url: the device's connection URL.
    func loadPaths(_ url: String) -> [String] {
        allPaths().first { $0.url == url }?.paths ?? []
    }

    /// Replaces a device's paths and makes it the device used last; the oldest devices beyond
    /// ``pathDevices`` are dropped.
    /// - Parameters:
    ///   - url: the device's connection URL.
    ///   - paths: its paths, most recent first.
    func savePaths(_ url: String, _ paths: [String]) {
        // One server saves for several devices at once: the read and the write go together.
        Self.pathsLock.withLock { _ in
            var all = allPaths().filter { $0.url != url }
            all.insert(DevicePaths(url: url, paths: paths), at: 0)
            write(Array(all.prefix(Self.pathDevices)), to: pathsFile)
        }
    }

    /// Held across a read, change and write of the file, so two saves in this process do not
    /// lose one another's change.
    private static let pathsLock = Locked(())

    private func allPaths() -> [DevicePaths] {
        guard FileManager.default.fileExists(atPath: pathsFile.path), let data = try? LocalFile.read(pathsFile) else {
            return []
        }
        return (try? JSONDecoder().decode([DevicePaths].self, from: data)) ?? []
    }

    private func write(_ value: some Encodable, to file: URL) {
        try? FileManager.default.createDirectory(
            at: file.deletingLastPathComponent(),
            withIntermediateDirectories: true
        )
        try? JSONEncoder().encode(value).write(to: file, options: .atomic)
    }
}
