import Foundation

/// The simulated device's file system: one mount point, `/lfs1` as in Zephyr's samples, whose
/// contents live in a host folder that no device path can leave.
///
/// Device paths are resolved lexically and strictly: they must be absolute, `.` and `..`
/// components are refused (LittleFS has no parent links to follow), anything outside `/lfs1`
/// belongs to no mount point, and a symbolic link anywhere on the host side is refused, so
/// neither a crafted path nor a link planted in the state folder reaches outside ``root``.
public struct FileSystemSandbox: Sendable {
    /// The device mount point.
    public static let mountPoint = "/lfs1"
    /// `CONFIG_MCUMGR_GRP_FS_PATH_LEN`: the longest path accepted.
    public static let maximumPathLength = 64

    /// The host folder holding the mount's contents.
    public let root: URL

    /// Creates a sandbox over a host folder, made on the first file written: most simulated
    /// devices never store a file, and a test suite makes thousands of them, each of whose
    /// folders cost a `mkdir` and a recursive removal on the thread that dropped the device (both
    /// threads of the cooperative pool were seen blocked in `rmdir` for over a second on a busy
    /// disk, stalling every in-process device and client).
    /// - Parameter root: the folder.
    public init(root: URL) {
        self.root = root.standardizedFileURL
    }

    /// Where a device path leads.
    public enum Resolution: Sendable, Hashable {
        /// A host location inside the sandbox (which may or may not exist).
        case inside(URL)
        /// The path names no mounted file system (`-ENOENT` in Zephyr).
        case noMountPoint
        /// The path is not acceptable (`-EINVAL`): relative, `.`/`..`, NUL, or through a link.
        case invalidName
    }

    /// Resolves a device path.
    /// - Parameter path: the path the client sent.
    /// - Returns: the resolution.
    public func resolve(_ path: String) -> Resolution {
        guard path.hasPrefix("/"), !path.contains("\0") else { return .invalidName }
        let components = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        if components.contains(where: { $0 == "." || $0 == ".." }) { return .invalidName }
        guard components.first == String(Self.mountPoint.dropFirst()) else { return .noMountPoint }
        var url = root
        for component in components.dropFirst() {
            url.appendPathComponent(component, isDirectory: false)
            if isSymbolicLink(url) { return .invalidName }
        }
        if isSymbolicLink(root) { return .invalidName }
        return .inside(url)
    }

    private func isSymbolicLink(_ url: URL) -> Bool {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return false }
        return attributes[.type] as? FileAttributeType == .typeSymbolicLink
    }

    /// What is at a host location.
    public enum Entry: Sendable, Hashable {
        case missing
        case directory
        case file(size: Int)
    }

    /// Looks at a resolved location without following links.
    public func entry(at url: URL) -> Entry {
        // The mount's root is a folder whether or not its host folder was made yet.
        if url.standardizedFileURL.path == root.path { return .directory }
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return .missing }
        switch attributes[.type] as? FileAttributeType {
        case .typeDirectory?: return .directory
        case .typeRegular?: return .file(size: (attributes[.size] as? NSNumber)?.intValue ?? 0)
        default: return .missing
        }
    }

    /// Reads bytes of a file.
    public func read(_ url: URL, offset: Int, count: Int) -> [UInt8]? {
        guard let handle = try? FileHandle(forReadingFrom: url) else { return nil }
        defer { try? handle.close() }
        guard (try? handle.seek(toOffset: UInt64(offset))) != nil else { return nil }
        guard let data = try? handle.read(upToCount: count) else { return [] }
        return Array(data)
    }

    /// Creates or truncates a file. Parent folders are not created (as LittleFS does not).
    public func create(_ url: URL, truncate: Bool) -> Bool {
        if !FileManager.default.fileExists(atPath: root.path) {
            try? FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        }
        let parent = url.deletingLastPathComponent()
        guard entry(at: parent) == .directory else { return false }
        if truncate || entry(at: url) == .missing {
            return FileManager.default.createFile(atPath: url.path, contents: Data())
        }
        return true
    }

    /// Appends bytes to a file.
    public func append(_ url: URL, bytes: [UInt8]) -> Bool {
        guard let handle = try? FileHandle(forWritingTo: url) else { return false }
        defer { try? handle.close() }
        guard (try? handle.seekToEnd()) != nil else { return false }
        return (try? handle.write(contentsOf: Data(bytes))) != nil
    }

    /// A folder's entries by name (links and other kinds left out, as ``resolve(_:)`` refuses
    /// them); `nil` when the location is not a folder.
    public func list(_ url: URL) -> [(name: String, isDirectory: Bool)]? {
        guard entry(at: url) == .directory else { return nil }
        // The mount's root exists before its host folder is made: empty then.
        let names = (try? FileManager.default.contentsOfDirectory(atPath: url.path)) ?? []
        return names.sorted().compactMap { name in
            switch entry(at: url.appendingPathComponent(name)) {
            case .directory: (name, true)
            case .file: (name, false)
            case .missing: nil
            }
        }
    }
}
