import Foundation
import MCUmgrConnect
import SMPPOSIX

/// Saved connection profiles: a name → connection URL map in the user's config directory
/// (`$MCUMGR_CONFIG_DIR`, else `$XDG_CONFIG_HOME/mcumgr`, else `$HOME/.config/mcumgr`; on macOS
/// `$HOME/Library/Application Support/mcumgr` unless `XDG_CONFIG_HOME` is set), file
/// `profiles.json`.
public struct ProfileStore: Sendable {
    /// The directory holding `profiles.json`.
    public let directory: URL

    /// A directory that replaces the default for the current task (tests run commands in-process
    /// and must not touch the user's profiles, nor change the process's environment under
    /// other tests).
    @TaskLocal static var directoryOverride: URL?

    /// Creates a store.
    /// - Parameter directory: the directory; `nil` uses the default described above.
    public init(directory: URL? = nil) {
        self.directory =
            directory ?? ProfileStore.directoryOverride
            ?? ProfileStore.defaultDirectory(environment: ProcessInfo.processInfo.environment)
    }

    /// The default directory for an environment.
    /// - Parameter environment: the process environment.
    /// - Returns: the directory holding `profiles.json`.
    static func defaultDirectory(environment: [String: String]) -> URL {
        func value(_ name: String) -> String? { environment[name].flatMap { $0.isEmpty ? nil : $0 } }
        if let explicit = value("MCUMGR_CONFIG_DIR") { return URL(fileURLWithPath: explicit) }
        if let xdg = value("XDG_CONFIG_HOME") { return URL(fileURLWithPath: xdg).appendingPathComponent("mcumgr") }
        // `$HOME` first: it is what the user (or a sandbox, a CI job, sudo -E) set; the password
        // database's home directory is the fallback.
        let home = value("HOME").map { URL(fileURLWithPath: $0) } ?? FileManager.default.homeDirectoryForCurrentUser
        #if os(macOS)
            return home.appendingPathComponent("Library/Application Support/mcumgr")
        #else
            return home.appendingPathComponent(".config/mcumgr")
        #endif
    }

    private var file: URL { directory.appendingPathComponent("profiles.json") }

    /// All profiles, sorted by name.
    /// - Throws: ``ProfileError`` if the file exists but is not a JSON object of strings.
    public func load() throws -> [(name: String, url: String)] {
        guard FileManager.default.fileExists(atPath: file.path) else { return [] }
        let data = try LocalFile.read(file)
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: String] else {
            throw ProfileError(
                "\(file.path) is not a JSON object of profile names to URLs; fix or delete it",
                badFile: true
            )
        }
        return object.sorted { $0.key < $1.key }.map { (name: $0.key, url: $0.value) }
    }

    /// The URL of one profile.
    /// - Parameter name: the profile name.
    /// - Throws: ``ProfileError`` if there is no such profile.
    public func url(of name: String) throws -> String {
        guard let entry = try load().first(where: { $0.name == name }) else {
            throw ProfileError("no connection profile '\(name)'; list them with 'mcumgr conn list'")
        }
        return entry.url
    }

    /// Adds a profile, or replaces one when `replacing` (the URL is validated first).
    /// - Parameters:
    ///   - name: the profile name.
    ///   - url: the connection URL.
    ///   - replacing: replace a profile of that name; otherwise one is an error.
    /// - Throws: ``ProfileError`` when the profile exists and `replacing` is false.
    public func save(name: String, url: String, replacing: Bool = false) throws {
        _ = try ConnectionURL(parsing: url)
        var profiles = Dictionary(uniqueKeysWithValues: try load().map { ($0.name, $0.url) })
        if let existing = profiles[name], !replacing, existing != url {
            throw ProfileError("profile '\(name)' exists (\(existing)); add --force to replace it")
        }
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
    /// The profiles file itself is not what it must be (exit status 65); otherwise the command
    /// line named a profile wrongly (64).
    var badFile: Bool
    init(_ message: String, badFile: Bool = false) {
        self.message = message
        self.badFile = badFile
    }
    public var description: String { message }
}
