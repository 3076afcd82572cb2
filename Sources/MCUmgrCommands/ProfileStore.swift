import Foundation

/// Saved connection profiles: a name → connection URL map in the user's config directory
/// (`$MCUMGR_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcumgr`, else `~/.config/mcumgr`; on macOS
/// `~/Library/Application Support/mcumgr`), file `profiles.json`.
public struct ProfileStore: Sendable {
    /// The directory holding `profiles.json`.
    public let directory: URL

    /// Creates a store.
    /// - Parameter directory: the directory; `nil` uses the default described above.
    public init(directory: URL? = nil) {
        self.directory = directory ?? ProfileStore.defaultDirectory()
    }

    private static func defaultDirectory() -> URL {
        let environment = ProcessInfo.processInfo.environment
        if let explicit = environment["MCUMGR_CONFIG_DIR"], !explicit.isEmpty { return URL(fileURLWithPath: explicit) }
        #if os(macOS)
            let base = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(
                "Library/Application Support"
            )
        #else
            let base =
                environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
                ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config")
        #endif
        return base.appendingPathComponent("mcumgr")
    }

    private var file: URL { directory.appendingPathComponent("profiles.json") }

    /// All profiles, sorted by name.
    /// - Throws: ``ProfileError`` if the file exists but is not a JSON object of strings.
    public func load() throws -> [(name: String, url: String)] {
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        let data = try Data(contentsOf: file)
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: String] else {
            throw ProfileError("\(file.path) is not a JSON object of profile names to URLs; fix or delete it")
        }
        return object.sorted { $0.key < $1.key }.map { (name: $0.key, url: $0.value) }
    }

    /// The URL of one profile.
    /// - Parameter name: the profile name.
    /// - Throws: ``ProfileError`` if there is no such profile.
    public func url(of name: String) throws -> String {
        guard let entry = try load().first(where: { $0.name == name }) else {
            throw ProfileError("no connection profile '\(name)'; list them with 'mcumgr conn show'")
        }
        return entry.url
    }

    /// Adds or replaces a profile (the URL is validated first).
    /// - Parameters:
    ///   - name: the profile name.
    ///   - url: the connection URL.
    public func save(name: String, url: String) throws {
        _ = try ConnectionURL(parsing: url)
        var profiles = Dictionary(uniqueKeysWithValues: try load().map { ($0.name, $0.url) })
        profiles[name] = url
        try write(profiles)
    }

    /// Removes a profile.
    /// - Parameter name: the profile name.
    /// - Throws: ``ProfileError`` if there is no such profile.
    public func remove(name: String) throws {
        var profiles = Dictionary(uniqueKeysWithValues: try load().map { ($0.name, $0.url) })
        guard profiles.removeValue(forKey: name) != nil else { throw ProfileError("no connection profile '\(name)'") }
        try write(profiles)
    }

    private func write(_ profiles: [String: String]) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let data = try JSONSerialization.data(withJSONObject: profiles, options: [.prettyPrinted, .sortedKeys])
        // Write beside and rename, so an interrupted write never leaves a truncated file.
        try data.write(to: file, options: .atomic)
    }
}

/// A profile problem, with what to do about it.
public struct ProfileError: Error, Sendable, CustomStringConvertible {
    /// The explanation.
    public var message: String
    init(_ message: String) { self.message = message }
    public var description: String { message }
}
