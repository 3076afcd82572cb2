import Foundation

/// The private PostgreSQL server fleet tests share rollouts through: `MCUMGR_TEST_POSTGRES`
/// (`postgres://postgres@127.0.0.1:55432/mcumgr`, what `scripts/postgres-test-server.sh start`
/// prints and `.ci/run` exports). Outside CI a test without it is skipped, with the reason; in CI
/// (`CI=true`) it runs, and fails on the missing server.
public enum TestPostgres {
    /// The server's URL, if one is configured.
    public static let url: String? = ProcessInfo.processInfo.environment["MCUMGR_TEST_POSTGRES"].flatMap {
        $0.isEmpty ? nil : $0
    }

    /// Whether the tests run: a server is configured, or this is CI (where its absence fails).
    public static let enabled = url != nil || Peers.isCI

    /// A new, empty database on the server, so tests run side by side and again without meeting
    /// each other's rows.
    /// - Returns: its URL.
    /// - Throws: ``PeerError`` when no server is configured or `psql` cannot create it.
    public static func freshDatabase() throws -> String {
        guard let url, var components = URLComponents(string: url) else {
            throw PeerError(message: "CI=true but MCUMGR_TEST_POSTGRES is not set: .ci/run starts the server")
        }
        let name = "mcumgr_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", url, "-qc", "CREATE DATABASE \(name)"]
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            throw PeerError(message: "psql could not create a database on \(url): \(text)")
        }
        components.path = "/" + name
        return components.string ?? url
    }

    /// Runs SQL and returns the rows, fields separated by `|`.
    public static func query(_ url: String, _ sql: String) throws -> [[String]] {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["psql", url, "-qAtc", sql]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw PeerError(message: "psql failed: \(sql)") }
        return String(decoding: data, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
    }
}
