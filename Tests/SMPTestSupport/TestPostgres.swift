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
    /// each other's rows. `psql` runs as a child process off the cooperative pool: waiting for it
    /// on a pool thread (as this did) held one of the two threads of this 2-core machine for the
    /// whole `CREATE DATABASE`, and every simulated device and upgrade in the process with it.
    /// - Returns: its URL.
    /// - Throws: ``PeerError`` when no server is configured or `psql` cannot create it.
    public static func freshDatabase() async throws -> String {
        guard let url, var components = URLComponents(string: url) else {
            throw PeerError(message: "CI=true but MCUMGR_TEST_POSTGRES is not set: .ci/run starts the server")
        }
        let name = "mcumgr_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let result = try await Peers.runProcess(
            "/usr/bin/env",
            ["psql", url, "-qc", "CREATE DATABASE \(name)"],
            stdin: nil
        )
        guard result.status == 0 else {
            throw PeerError(
                message: "psql could not create a database on \(url): \(String(decoding: result.stderr, as: UTF8.self))"
            )
        }
        components.path = "/" + name
        return components.string ?? url
    }

    /// Runs SQL and returns the rows, fields separated by `|` (`psql` off the cooperative pool).
    public static func query(_ url: String, _ sql: String) async throws -> [[String]] {
        let result = try await Peers.runProcess("/usr/bin/env", ["psql", url, "-qAtc", sql], stdin: nil)
        guard result.status == 0 else {
            throw PeerError(message: "psql failed: \(sql): \(String(decoding: result.stderr, as: UTF8.self))")
        }
        return String(decoding: result.stdout, as: UTF8.self).split(separator: "\n").map {
            $0.split(separator: "|", omittingEmptySubsequences: false).map(String.init)
        }
    }
}
