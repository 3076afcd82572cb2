import Foundation
import Logging
import MCUmgrConnect
import MCUmgrFleet
import NIOCore
import PostgresNIO

/// A rollout's state in PostgreSQL, shared by `mcumgr fleet` workers on several hosts.
///
/// No coordination protocol of our own: every decision is one transaction. A claim locks the
/// rollout's row (`FOR UPDATE`), so claims and ends are serialised, and the rollout machine
/// decides from the same rows (`RolloutStateMachine.claim(_:policy:worker:capacity:lease:at:)`,
/// `RolloutStateMachine.finish(_:device:attempt:worker:result:policy:at:)`): this store only
/// reads, locks and writes. The devices a worker takes are
/// locked with `FOR UPDATE SKIP LOCKED` and leased to the worker, which renews the lease while it
/// runs them. A worker that dies stops renewing: its devices go back to pending when the lease
/// expires, and another worker plans them again from their own image list. Times are the
/// database's (`clock_timestamp()`), so hosts' clocks do not matter.
public actor PostgresRolloutStore: SharedRolloutStore {
    private let connection: PostgresConnection
    private let logger: Logger
    private let mutex = AsyncMutex()
    /// The server, `HOST:PORT`, for messages.
    private let address: String
    /// How long one transaction may take before the connection is given up: a backstop for a
    /// connection that neither answers nor fails (a query on a connection the server ended was
    /// seen to wait for ever), far above any lock wait of a healthy rollout.
    static let transactionDeadline: Duration = .seconds(120)

    /// Connects.
    /// - Parameter url: `postgres://[USER[:PASSWORD]@]HOST[:PORT]/DATABASE[?sslmode=disable|require]`.
    /// - Throws: `RolloutStoreError` for a URL that cannot be used or a server that cannot be
    ///   reached.
    public init(url: String) async throws {
        logger = Logger(label: "mcumgr.fleet.postgres")
        let configuration = try Self.configuration(url)
        let address = "\(configuration.host ?? "?"):\(configuration.port ?? 5432)"
        self.address = address
        do {
            connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
        } catch {
            throw RolloutStoreError(Self.describe(error, at: address, connecting: true))
        }
        do {
            try await schema()
        } catch {
            // PostgresNIO traps on a connection released unclosed: close it before giving up.
            await close()
            throw error
        }
    }

    /// The connection settings a URL names.
    static func configuration(_ url: String) throws -> PostgresConnection.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme),
            let host = components.host, !host.isEmpty
        else {
            throw RolloutStoreError(
                "'\(redacted(url))' is not a PostgreSQL URL: postgres://USER@HOST[:PORT]/DATABASE",
                badLocation: true
            )
        }
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else {
            throw RolloutStoreError("'\(redacted(url))' names no database", badLocation: true)
        }
        var tls = PostgresConnection.Configuration.TLS.disable
        for item in components.queryItems ?? [] {
            switch (item.name, item.value) {
            case ("sslmode", "disable"?): tls = .disable
            case ("sslmode", "require"?):
                do {
                    tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
                } catch {
                    throw RolloutStoreError("TLS: \(error)")
                }
            default:
                throw RolloutStoreError(
                    "'\(redacted(url))': unknown option \(item.name) (sslmode=disable|require)",
                    badLocation: true
                )
            }
        }
        return PostgresConnection.Configuration(
            host: host,
            port: components.port ?? 5432,
            username: components.user ?? "postgres",
            password: components.password,
            database: database,
            tls: tls
        )
    }

    /// The URL without its password, for messages.
    static func redacted(_ url: String) -> String {
        guard var components = URLComponents(string: url), components.password != nil else { return url }
        components.password = "***"
        return components.string ?? url
    }

    private func schema() async throws {
        let address = self.address
        try await transaction { connection, logger in
            // Workers starting together must not race to create the tables.
            try await connection.query("SELECT pg_advisory_xact_lock(2202202)", logger: logger)
            try await connection.query(
                """
                CREATE TABLE IF NOT EXISTS mcumgr_rollouts (id TEXT PRIMARY KEY, file TEXT NOT NULL,
                    mode TEXT NOT NULL, versions TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL,
                    updated_at TIMESTAMPTZ NOT NULL)
                """,
                logger: logger
            )
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: "CREATE TABLE IF NOT EXISTS mcumgr_devices (rollout TEXT NOT NULL REFERENCES "
                        + "mcumgr_rollouts(id), \(Self.deviceColumns), lease_until TIMESTAMPTZ, PRIMARY KEY (rollout, id))"
                ),
                logger: logger
            )
            // The layout's version: a database written before it was stored has layout 1.
            try await connection.query(
                "CREATE TABLE IF NOT EXISTS mcumgr_schema (version INTEGER NOT NULL)",
                logger: logger
            )
            var stored: Int?
            for try await version in try await connection.query(
                "SELECT max(version) FROM mcumgr_schema",
                logger: logger
            )
            .decode(Int?.self) {
                stored = version
            }
            if let stored, stored > DeviceRow.schemaVersion { throw DeviceRow.tooNew(address, version: stored) }
            // Migrations from older layouts go here, one step per version.
            if stored != DeviceRow.schemaVersion {
                try await connection.query("DELETE FROM mcumgr_schema", logger: logger)
                try await connection.query(
                    "INSERT INTO mcumgr_schema (version) VALUES (\(DeviceRow.schemaVersion))",
                    logger: logger
                )
            }
        }
    }

    // MARK: - RolloutStore

    public func prepare(_ rollout: RolloutDescription, devices: [Inventory.Device], retryFailed: Bool) async throws
        -> [DeviceRecord]
    {
        try await transaction { connection, logger in
            let versions = rollout.versions.joined(separator: ",")
            try await connection.query(
                """
                INSERT INTO mcumgr_rollouts (id, file, mode, versions, created_at, updated_at)
                VALUES (\(rollout.id), \(rollout.file), \(rollout.mode), \(versions), clock_timestamp(), clock_timestamp())
                ON CONFLICT (id) DO UPDATE SET updated_at = clock_timestamp()
                """,
                logger: logger
            )
            let now = try await Self.lockRollout(rollout.id, connection, logger)
            let writes = try RolloutStateMachine.prepareShared(
                try await Self.records(rollout.id, connection, logger, leases: true),
                devices: devices,
                retryFailed: retryFailed,
                at: now
            )
            for write in writes {
                try await Self.write(write.record, rollout: rollout.id, lease: write.leaseUntil, connection, logger)
            }
            let records = writes.map(\.record)
            return records
        }
    }

    public func save(_ records: [DeviceRecord], rollout: String) async throws {
        try await transaction { connection, logger in
            for record in records { try await Self.write(record, rollout: rollout, lease: nil, connection, logger) }
        }
    }

    public func rollout(_ id: String?) async throws -> (RolloutDescription, [DeviceRecord])? {
        try await transaction { connection, logger in
            let rows =
                if let id {
                    try await connection.query(
                        "SELECT id, file, mode, versions FROM mcumgr_rollouts WHERE id = \(id)",
                        logger: logger
                    )
                } else {
                    try await connection.query(
                        "SELECT id, file, mode, versions FROM mcumgr_rollouts ORDER BY updated_at DESC LIMIT 1",
                        logger: logger
                    )
                }
            for try await (id, file, mode, versions) in rows.decode((String, String, String, String).self) {
                let description = RolloutDescription(
                    id: id,
                    file: file,
                    mode: mode,
                    versions: versions.split(separator: ",").map(String.init)
                )
                // With the leases: a running device's lease says whether its worker still holds it.
                return (description, try await Self.records(id, connection, logger, leases: true))
            }
            return nil
        }
    }

    public func rollouts() async throws -> [RolloutListing] {
        try await transaction { connection, logger in
            let rows = try await connection.query(
                """
                SELECT r.id, r.file, r.mode, r.versions, r.updated_at, d.status, COUNT(d.id)
                FROM mcumgr_rollouts r LEFT JOIN mcumgr_devices d ON d.rollout = r.id
                GROUP BY r.id, d.status ORDER BY r.updated_at DESC, r.id
                """,
                logger: logger
            )
            var list: [RolloutListing] = []
            let decoded = rows.decode((String, String, String, String, Date, String?, Int).self)
            for try await (id, file, mode, versions, started, status, count) in decoded {
                let rollout = RolloutDescription(
                    id: id,
                    file: file,
                    mode: mode,
                    versions: versions.split(separator: ",").map(String.init)
                )
                try RolloutListing.add(to: &list, rollout, started: started, status: status, count: count)
            }
            return list
        }
    }

    public func close() async {
        let connection = self.connection
        await Task.detached { try? await connection.close() }.value
    }

    // MARK: - SharedRolloutStore

    public nonisolated var sharing: (any SharedRolloutStore)? { self }

    public func claim(_ rollout: String, worker: String, policy: RolloutPolicy, capacity: Int, lease: Duration)
        async throws -> RolloutClaim
    {
        try await transaction { connection, logger in
            // Every decision is the rollout machine's; this only reads, locks rows and writes.
            let now = try await Self.lockRollout(rollout, connection, logger)
            let records = try await Self.records(rollout, connection, logger, leases: true)
            let claim = RolloutStateMachine.claim(
                records,
                policy: policy,
                worker: worker,
                capacity: capacity,
                lease: lease,
                at: now
            )
            for write in claim.writes {
                try await Self.write(write.record, rollout: rollout, lease: write.leaseUntil, connection, logger)
            }
            var after = claim.records
            let ids = claim.candidates.map { after[$0.index].id }
            let locked = try await Self.lock(ids, rollout: rollout, connection, logger)
            var started: [DeviceRecord] = []
            for candidate in claim.candidates where locked.contains(after[candidate.index].id) {
                let write = RolloutStateMachine.started(
                    after[candidate.index],
                    phase: candidate.phase,
                    worker: worker,
                    lease: lease,
                    at: now
                )
                try await Self.write(write.record, rollout: rollout, lease: write.leaseUntil, connection, logger)
                after[candidate.index] = write.record
                started.append(write.record)
            }
            let plain = after.map {
                var record = $0
                record.leaseUntil = nil
                return record
            }
            return RolloutClaim(
                started: started,
                closed: claim.closed,
                records: plain,
                verdict: claim.verdict,
                now: now
            )
        }
    }

    public func finish(
        _ rollout: String,
        device: String,
        attempt: Int,
        worker: String,
        result: AttemptResult,
        policy: RolloutPolicy
    ) async throws -> (record: DeviceRecord, retryAt: Date?)? {
        try await transaction { connection, logger in
            let now = try await Self.lockRollout(rollout, connection, logger)
            let records = try await Self.records(rollout, connection, logger)
            guard
                let (ended, retryAt) = RolloutStateMachine.finish(
                    records,
                    device: device,
                    attempt: attempt,
                    worker: worker,
                    result: result,
                    policy: policy,
                    at: now
                )
            else { return nil }
            try await Self.write(ended, rollout: rollout, lease: nil, connection, logger)
            return (ended, retryAt)
        }
    }

    public func versionRead(_ rollout: String, device: String, attempt: Int, worker: String, version: String)
        async throws
    {
        try await transaction { connection, logger in
            // The same rule as one host's (RolloutTransitions.versionRead): the first reading stays.
            _ = try await connection.query(
                """
                UPDATE mcumgr_devices SET version_before = COALESCE(version_before, \(version))
                WHERE rollout = \(rollout) AND id = \(device) AND worker = \(worker) AND status = 'running'
                    AND attempts = \(attempt)
                """,
                logger: logger
            )
        }
    }

    public func renew(_ rollout: String, worker: String, devices: [String], lease: Duration) async throws -> Set<String>
    {
        try await transaction { connection, logger in
            let seconds = RolloutTransitions.seconds(lease)
            let rows = try await connection.query(
                """
                UPDATE mcumgr_devices SET lease_until = clock_timestamp() + make_interval(secs => \(seconds))
                WHERE rollout = \(rollout) AND worker = \(worker) AND status = 'running' AND id = ANY(\(devices))
                RETURNING id
                """,
                logger: logger
            )
            var mine = Set<String>()
            for try await id in rows.decode(String.self) { mine.insert(id) }
            return mine
        }
    }

    // MARK: - SQL

    /// Runs `body` in a transaction, one at a time on this connection.
    private func transaction<T: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection, Logger) async throws -> T
    ) async throws -> T {
        await mutex.lock()
        defer { Task { await mutex.unlock() } }
        let connection = self.connection
        let logger = self.logger
        let address = self.address
        // A query on a connection the server has ended never returns (PostgresNIO 1.33): ask first.
        guard !connection.isClosed else { throw RolloutStoreError(Self.lost(address)) }
        do {
            let seconds = Self.transactionDeadline.components.seconds
            return try await Self.withDeadline(
                Self.transactionDeadline,
                message: "PostgreSQL at \(address) did not answer for \(seconds) s; the connection was closed",
                giveUp: { try? await connection.close() },
                body: {
                    try await connection.query("BEGIN", logger: logger)
                    let value = try await body(connection, logger)
                    try await connection.query("COMMIT", logger: logger)
                    return value
                }
            )
        } catch {
            if !connection.isClosed { _ = try? await connection.query("ROLLBACK", logger: logger) }
            if let error = error as? RolloutStoreError { throw error }
            throw RolloutStoreError(Self.describe(error, at: address, connecting: false))
        }
    }

    /// Locks the rollout's row (every claim and end is serialised on it) and reads the time.
    private static func lockRollout(_ rollout: String, _ connection: PostgresConnection, _ logger: Logger) async throws
        -> Date
    {
        let locked = try await connection.query(
            "SELECT id FROM mcumgr_rollouts WHERE id = \(rollout) FOR UPDATE",
            logger: logger
        )
        var found = false
        for try await _ in locked.decode(String.self) { found = true }
        guard found else { throw RolloutStoreError("no rollout \(rollout) in the database") }
        // The time is read once the lock is held: read in the locking statement, it is taken
        // before the wait, and a claim would be stamped earlier than the end it waited for.
        let rows = try await connection.query("SELECT clock_timestamp()", logger: logger)
        for try await now in rows.decode(Date.self) { return now }
        throw RolloutStoreError("PostgreSQL did not say the time")
    }

    /// Locks the chosen pending devices, skipping any another transaction holds.
    private static func lock(_ ids: [String], rollout: String, _ connection: PostgresConnection, _ logger: Logger)
        async throws -> Set<String>
    {
        guard !ids.isEmpty else { return [] }
        let rows = try await connection.query(
            """
            SELECT id FROM mcumgr_devices WHERE rollout = \(rollout) AND id = ANY(\(ids)) AND status = 'pending'
            FOR UPDATE SKIP LOCKED
            """,
            logger: logger
        )
        var locked = Set<String>()
        for try await id in rows.decode(String.self) { locked.insert(id) }
        return locked
    }
}
