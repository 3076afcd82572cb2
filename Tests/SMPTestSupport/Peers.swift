import Foundation

/// Locates and runs the independent peer tools (Python `smp`, `cbor2`, `imgtool`, `smpmgr`…)
/// that the tests use as oracles.
///
/// Lookup order: `$MCUMGR_PEERS_VENV/bin`, then `.venv/bin` in the package root (where
/// `.ci/run` and `scripts/setup-peers.sh` install them), then `PATH`.
///
/// A missing peer is never a pass. Tests that need one are declared with
/// `.enabled(if: Peers.available("cbor2"))`: outside CI that skips them with the reason shown;
/// in CI (`CI=true`) `available` always answers `true`, so the test runs and fails loudly
/// with the message from ``run(_:_:stdin:)`` instead of being skipped.
public enum Peers {
    /// The package root (the folder holding Package.swift), found from this file's path.
    public static let packageRoot: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
        }
        return URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
    }()

    /// Whether this run is CI, where every peer must be present.
    public static let isCI: Bool = ProcessInfo.processInfo.environment["CI"].map { $0 == "true" || $0 == "1" } ?? false

    private static let searchDirectories: [String] = {
        var dirs: [String] = []
        if let venv = ProcessInfo.processInfo.environment["MCUMGR_PEERS_VENV"] { dirs.append(venv + "/bin") }
        dirs.append(packageRoot.appendingPathComponent(".venv/bin").path)
        dirs += (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map(String.init)
        return dirs
    }()

    /// The full path of an executable peer, or `nil`.
    /// - Parameter tool: the executable's name, e.g. `imgtool`.
    public static func path(of tool: String) -> String? {
        for dir in searchDirectories {
            let candidate = dir + "/" + tool
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The Python interpreter that has the peers installed.
    public static var python: String? { path(of: "python3") ?? path(of: "python") }

    /// Whether a peer can be used: a Python module name (`cbor2`, `smp`, `smpclient`,
    /// `mcumgr_toolkit`) or an executable (`imgtool`, `smpmgr`). Always `true` in CI, so that a
    /// missing peer fails there instead of being skipped.
    /// - Parameter name: the module or executable name.
    public static func available(_ name: String) -> Bool {
        if isCI { return true }
        return cache.withLock { cache in
            if let known = cache[name] { return known }
            let found: Bool
            if path(of: name) != nil && !["python3", "python"].contains(name) {
                found = true
            } else if let python {
                found = (try? runProcess(python, ["-c", "import \(name)"], stdin: nil).status) == 0
            } else {
                found = false
            }
            cache[name] = found
            return found
        }
    }

    private static let cache = LockedCache()

    /// Runs a Python snippet with the peers' interpreter.
    /// - Parameters:
    ///   - script: Python source.
    ///   - arguments: `sys.argv[1:]`.
    ///   - stdin: bytes for standard input.
    /// - Returns: standard output.
    /// - Throws: ``PeerError`` if no interpreter is found or the script exits non-zero.
    public static func python(_ script: String, _ arguments: [String] = [], stdin: Data? = nil) throws -> Data {
        guard let python else {
            throw PeerError(message: "python3 with the peers is not installed; run scripts/setup-peers.sh")
        }
        return try run(python, ["-c", script] + arguments, stdin: stdin)
    }

    /// Runs a peer executable by name or path.
    /// - Parameters:
    ///   - tool: a name looked up like ``path(of:)``, or an absolute path.
    ///   - arguments: its arguments.
    ///   - stdin: bytes for standard input.
    /// - Returns: standard output.
    /// - Throws: ``PeerError`` if the tool is missing or exits non-zero (with its stderr).
    public static func run(_ tool: String, _ arguments: [String], stdin: Data? = nil) throws -> Data {
        guard let executable = tool.hasPrefix("/") ? tool : path(of: tool) else {
            throw PeerError(message: "peer tool `\(tool)` is not installed; run scripts/setup-peers.sh")
        }
        let result = try runProcess(executable, arguments, stdin: stdin)
        guard result.status == 0 else {
            throw PeerError(
                message: "\(tool) \(arguments.prefix(3).joined(separator: " ")) exited \(result.status): "
                    + String(decoding: result.stderr, as: UTF8.self)
            )
        }
        return result.stdout
    }

    /// Runs a process to completion, collecting both output streams.
    public static func runProcess(_ executable: String, _ arguments: [String], stdin: Data?) throws -> (
        status: Int32, stdout: Data, stderr: Data
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let out = Pipe()
        let err = Pipe()
        let input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        // Drain both pipes concurrently so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        let outBox = DataBox()
        let errBox = DataBox()
        DispatchQueue.global().async(group: group) { outBox.data = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errBox.data = err.fileHandleForReading.readDataToEndOfFile() }
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try? input.fileHandleForWriting.close()
        group.wait()
        process.waitUntilExit()
        return (process.terminationStatus, outBox.data, errBox.data)
    }
}

/// A peer tool was missing or failed.
public struct PeerError: Error, CustomStringConvertible {
    /// What happened, with the tool's stderr.
    public var message: String
    public var description: String { message }
    /// Creates an error.
    /// - Parameter message: what happened.
    public init(message: String) { self.message = message }
}

private final class DataBox: @unchecked Sendable {
    // Written by exactly one dispatch block and read only after the group's wait.
    var data = Data()
}

private final class LockedCache: @unchecked Sendable {
    // All access goes through `lock`.
    private let lock = NSLock()
    private var values: [String: Bool] = [:]
    func withLock<T>(_ body: (inout [String: Bool]) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&values)
    }
}
