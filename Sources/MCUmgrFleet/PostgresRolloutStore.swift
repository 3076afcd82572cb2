import Foundation
import Logging
import MCUmgrConnect
import NIOCore
import PostgresNIO

/// A rollout's state in PostgreSQL, shared by `mcumgr fleet` workers on several hosts.
///
/// No coordination protocol of our own: every decision is one transaction. A claim locks the
/// rollout's row (`FOR UPDATE`), so claims and ends are serialised and every worker decides the
/// canary, wave and budget gates from the same rows (``RolloutGates``); the devices it takes are
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
    /// - Throws: ``RolloutStoreError`` for a URL that cannot be used or a server that cannot be
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
            let existing = Dictionary(
                try await Self.records(rollout.id, connection, logger, leases: true).map { ($0.id, $0) },
                uniquingKeysWith: { a, _ in a }
            )
            var records: [DeviceRecord] = []
            var leases: [Date?] = []
            for (position, device) in devices.enumerated() {
                let fresh = DeviceRecord(
                    id: device.id,
                    url: device.url.description,
                    position: position,
                    labels: device.labels
                )
                var record = existing[device.id] ?? fresh
                if record.status == .running, !record.belongs(to: device),
                    record.leaseUntil.map({ $0 >= now }) ?? true
                {
                    // Another worker upgrades the device of this name at another URL right now:
                    // the workers were given different inventories, and replacing the record
                    // would leave that upgrade unrecorded.
                    throw RolloutStoreError(
                        "\(device.id) is being upgraded at \(record.url) by worker \(record.worker ?? "?"), but this inventory has \(device.url.description); give every worker the same inventory, or this one another --state"
                    )
                }
                if record.status != .running || !record.belongs(to: device) {
                    record = record.prepared(for: device, position: position, retryFailed: retryFailed)
                } else {
                    // A running device is some worker's: only its inventory facts change.
                    record.position = position
                    record.labels = device.labels
                }
                // A device that still runs keeps its worker's lease: written as none, it would
                // never expire, and a worker that dies now would wedge the rollout.
                leases.append(record.status == .running ? record.leaseUntil : nil)
                record.leaseUntil = nil
                records.append(record)
            }
            for (record, lease) in zip(records, leases) {
                try await Self.write(record, rollout: rollout.id, lease: lease, connection, logger)
            }
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

    public func close() async {
        let connection = self.connection
        await Task.detached { try? await connection.close() }.value
    }

    // MARK: - SharedRolloutStore

    public func claim(_ rollout: String, worker: String, policy: RolloutPolicy, capacity: Int, lease: Duration)
        async throws -> RolloutClaim
    {
        try await transaction { connection, logger in
            let now = try await Self.lockRollout(rollout, connection, logger)
            var records = try await Self.records(rollout, connection, logger, leases: true)
            // A dead worker's devices: pending again once their lease expired. A running device
            // with no lease at all (written so by an older version) gets one from now: it comes
            // back unless its worker, if alive, renews it.
            for index in records.indices where records[index].status == .running {
                guard let until = records[index].leaseUntil else {
                    let until = now.addingTimeInterval(RolloutTransitions.seconds(lease))
                    try await Self.write(records[index], rollout: rollout, lease: until, connection, logger)
                    continue
                }
                guard until < now else { continue }
                records[index].status = .pending
                try await Self.write(records[index], rollout: rollout, lease: nil, connection, logger)
            }
            let verdict = RolloutGates.verdict(records, policy: policy)
            var closed: [DeviceRecord] = []
            if case .halted(let reason) = verdict, !records.contains(where: { $0.status == .running }) {
                for index in records.indices where records[index].status == .pending {
                    records[index] = RolloutTransitions.close(records[index], reason: reason, at: now)
                    closed.append(records[index])
                    try await Self.write(records[index], rollout: rollout, lease: nil, connection, logger)
                }
            }
            let chosen = RolloutGates.starts(records, policy: policy, worker: worker, now: now).prefix(max(0, capacity))
            let locked = try await Self.lock(chosen.map { records[$0.index].id }, rollout: rollout, connection, logger)
            var started: [DeviceRecord] = []
            for (index, phase) in chosen where locked.contains(records[index].id) {
                records[index] = RolloutTransitions.start(records[index], phase: phase, worker: worker, at: now)
                let until = now.addingTimeInterval(RolloutTransitions.seconds(lease))
                try await Self.write(records[index], rollout: rollout, lease: until, connection, logger)
                started.append(records[index])
            }
            let plain = records.map {
                var record = $0
                record.leaseUntil = nil
                return record
            }
            return RolloutClaim(started: started, closed: closed, records: plain, verdict: verdict, now: now)
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
            guard let record = records.first(where: { $0.id == device }), record.status == .running,
                record.worker == worker, record.attempts == attempt
            else { return nil }
            var rolling = true
            if case .halted = RolloutGates.verdict(records, policy: policy) { rolling = false }
            if case .interrupted = result { rolling = false }
            let (ended, retryAt) = RolloutTransitions.end(record, result, policy: policy, rolling: rolling, at: now)
            try await Self.write(ended, rollout: rollout, lease: nil, connection, logger)
            return (ended, retryAt)
        }
    }

    public func versionRead(_ rollout: String, device: String, attempt: Int, worker: String, version: String)
        async throws
    {
        try await transaction { connection, logger in
            // The same rule as one host's (RolloutTransitions.versionRead): the first reading stays.
            try await connection.query(
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
