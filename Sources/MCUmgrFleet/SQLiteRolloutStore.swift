import Foundation
import Logging
import MCUmgrConnect
import MCUmgrDFU
import SQLiteNIO

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A rollout's state in a SQLite file: the default store, for one host.
///
/// SQLite comes with the package (sqlite-nio builds its own copy), so no system library or `-dev`
/// package is needed. One process at a time: a second `mcumgr fleet` on the same file is refused
/// while the first runs (an advisory lock on `PATH.lock`, released by the system when the process
/// ends, however it ends).
public actor SQLiteRolloutStore: RolloutStore {
    private let connection: SQLiteConnection
    private let path: String
    private var lockDescriptor: Int32 = -1

    /// Opens (creating if needed) the state file.
    /// - Parameters:
    ///   - path: the file.
    ///   - exclusive: hold the file's lock (a rollout that writes); `false` for reading (status).
    /// - Throws: ``RolloutStoreError`` when the file cannot be opened, is not a rollout state file,
    ///   or another process holds it.
    public init(path: String, exclusive: Bool = true) async throws {
        self.path = path
        let descriptor = exclusive ? try await Self.lock(path + ".lock") : -1
        var opened: SQLiteConnection?
        do {
            let connection = try await SQLiteConnection.open(
                storage: .file(path: path),
                logger: Logger(label: "mcumgr.fleet.sqlite")
            )
            opened = connection
            _ = try await connection.query("PRAGMA busy_timeout = 5000")
            try await Self.migrate(connection, path: path)
            self.connection = connection
        } catch {
            if let opened { await Task.detached { try? await opened.close() }.value }
            if descriptor >= 0 { releaseLock(descriptor) }
            if let error = error as? RolloutStoreError { throw error }
            throw RolloutStoreError("\(path): not a usable rollout state file (\(error))")
        }
        lockDescriptor = descriptor
    }

    static let schema = [
        """
        CREATE TABLE IF NOT EXISTS rollouts (id TEXT PRIMARY KEY, file TEXT NOT NULL, mode TEXT NOT NULL,
            versions TEXT NOT NULL, created_at REAL NOT NULL, updated_at REAL NOT NULL)
        """,
        "CREATE TABLE IF NOT EXISTS devices (rollout TEXT NOT NULL, "
            + DeviceRow.columnDefinitions { kind in
                switch kind {
                case .text: "TEXT"
                case .integer: "INTEGER"
                case .time: "REAL"
                }
            } + ", PRIMARY KEY (rollout, id))",
    ]

    /// Creates the tables, or checks and migrates the layout of a file written before: the
    /// layout's version is SQLite's `user_version` (0 in a file written before it was stored,
    /// whose layout is version 1).
    private static func migrate(_ connection: SQLiteConnection, path: String) async throws {
        let version = try await connection.query("PRAGMA user_version").first?.column("user_version")?.integer ?? 0
        guard version <= DeviceRow.schemaVersion else { throw DeviceRow.tooNew(path, version: version) }
        _ = try await connection.query("BEGIN IMMEDIATE")
        do {
            for statement in schema { _ = try await connection.query(statement) }
            // Migrations from older layouts go here, one step per version.
            _ = try await connection.query("PRAGMA user_version = \(DeviceRow.schemaVersion)")
            _ = try await connection.query("COMMIT")
        } catch {
            _ = try? await connection.query("ROLLBACK")
            throw error
        }
    }

    /// Whether a process holds the state file's lock now (a rollout runs on it): without one, a
    /// device recorded as running was left so by a process that ended first.
    /// - Parameter path: the state file.
    public static func isInUse(path: String) -> Bool {
        let descriptor = open(path + ".lock", O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return false }  // never locked: no rollout ever ran here
        defer { closeDescriptor(descriptor) }
        // A shared lock is refused while a rollout holds the exclusive one; a rollout starting
        // while this call holds it waits for it (`lock`) instead of taking it for another's.
        guard flock(descriptor, LOCK_SH | LOCK_NB) == 0 else { return true }
        flock(descriptor, LOCK_UN)
        return false
    }

    /// Takes the lock file's exclusive lock, which a rollout holds while it runs.
    ///
    /// A status check (``isInUse(path:)``, of this process or another) holds a shared lock for an
    /// instant, and a rollout started in that instant must not be refused as if another ran: while
    /// readers alone hold the lock, it is tried again after each `wait`.
    /// - Parameters:
    ///   - path: the lock file, created if missing.
    ///   - patience: the waits allowed for readers to leave (with the default wait, about as long
    ///     as SQLite's `busy_timeout` of the connection: 5 s).
    ///   - wait: one pause between tries.
    /// - Returns: the descriptor that holds the lock.
    /// - Throws: ``RolloutStoreError`` when another process runs a rollout on the file, or readers
    ///   held it through every wait; the `wait`'s error (cancellation).
    static func lock(
        _ path: String,
        patience: Int = 5_000,
        wait: @Sendable () async throws -> Void = { try await Task.sleep(for: .milliseconds(1)) }
    ) async throws -> Int32 {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw RolloutStoreError("\(path): cannot create the lock file (\(String(cString: strerror(errno))))")
        }
        var waits = 0
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            // A shared lock granted means no rollout holds the file: readers do.
            let readersOnly = flock(descriptor, LOCK_SH | LOCK_NB) == 0
            if readersOnly { _ = flock(descriptor, LOCK_UN) }
            guard readersOnly, waits < patience else {
                closeDescriptor(descriptor)
                throw RolloutStoreError(
                    readersOnly
                        ? "\(path): status checks held the state file's lock all the while this rollout waited to start (\(waits) waits); try again"
                        : "another mcumgr fleet process runs a rollout on this state file; wait for it, or share a rollout across processes with --state postgres://…"
                )
            }
            waits += 1
            do { try await wait() } catch {
                closeDescriptor(descriptor)
                throw error
            }
        }
        return descriptor
    }

    public func prepare(_ rollout: RolloutDescription, devices: [Inventory.Device], retryFailed: Bool) async throws
        -> [DeviceRecord]
    {
        let now = Date().timeIntervalSince1970
        // One transaction, as in PostgreSQL: the rollout's row and every device's, or nothing.
        try await run("BEGIN IMMEDIATE", [])
        do {
            let records = try await prepareRows(rollout, devices: devices, retryFailed: retryFailed, now: now)
            try await run("COMMIT", [])
            return records
        } catch {
            _ = try? await connection.query("ROLLBACK")
            throw error
        }
    }

    private func prepareRows(
        _ rollout: RolloutDescription,
        devices: [Inventory.Device],
        retryFailed: Bool,
        now: TimeInterval
    ) async throws -> [DeviceRecord] {
        try await run(
            """
            INSERT INTO rollouts (id, file, mode, versions, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
            ON CONFLICT(id) DO UPDATE SET updated_at = ?5, file = ?2
            """,
            [
                .text(rollout.id), .text(rollout.file), .text(rollout.mode),
                .text(rollout.versions.joined(separator: ",")),
                .float(now),
            ]
        )
        let records = RolloutStateMachine.prepare(
            try await records(rollout.id),
            devices: devices,
            retryFailed: retryFailed
        )
        for record in records { try await run(Self.upsert, Self.binds(record, rollout: rollout.id)) }
        return records
    }

    public func save(_ records: [DeviceRecord], rollout: String) async throws {
        guard !records.isEmpty else { return }
        try await run("BEGIN IMMEDIATE", [])
        do {
            for record in records { try await run(Self.upsert, Self.binds(record, rollout: rollout)) }
            try await run("COMMIT", [])
        } catch {
            _ = try? await connection.query("ROLLBACK")
            throw error
        }
    }

    public func versionRead(_ rollout: String, device: String, attempt: Int, worker: String, version: String)
        async throws
    {
        // The same rule as the rollout machine's (RolloutTransitions.versionRead): the first reading stays.
        try await run(
            """
            UPDATE devices SET version_before = COALESCE(version_before, ?1)
            WHERE rollout = ?2 AND id = ?3 AND worker = ?4 AND status = 'running' AND attempts = ?5
            """,
            [.text(version), .text(rollout), .text(device), .text(worker), .integer(attempt)]
        )
    }

    static let upsert =
        "INSERT OR REPLACE INTO devices (rollout, \(DeviceRow.columnList)) VALUES ("
        + (1...DeviceRow.columns.count + 1).map { "?\($0)" }.joined(separator: ", ") + ")"

    public func rollout(_ id: String?) async throws -> (RolloutDescription, [DeviceRecord])? {
        let rows = try await query(
            id == nil
                ? "SELECT * FROM rollouts ORDER BY updated_at DESC LIMIT 1" : "SELECT * FROM rollouts WHERE id = ?1",
            id.map { [.text($0)] } ?? []
        )
        guard let row = rows.first, let rolloutID = row.column("id")?.string else { return nil }
        let description = RolloutDescription(
            id: rolloutID,
            file: row.column("file")?.string ?? "",
            mode: row.column("mode")?.string ?? "",
            versions: (row.column("versions")?.string ?? "").split(separator: ",").map(String.init)
        )
        return (description, try await records(rolloutID))
    }

    public func rollouts() async throws -> [RolloutListing] {
        let rows = try await query(
            """
            SELECT r.id, r.file, r.mode, r.versions, r.updated_at, d.status, COUNT(d.id) AS devices
            FROM rollouts r LEFT JOIN devices d ON d.rollout = r.id
            GROUP BY r.id, d.status ORDER BY r.updated_at DESC, r.id
            """,
            []
        )
        var list: [RolloutListing] = []
        for row in rows {
            guard let id = row.column("id")?.string else { continue }
            let rollout = RolloutDescription(
                id: id,
                file: row.column("file")?.string ?? "",
                mode: row.column("mode")?.string ?? "",
                versions: (row.column("versions")?.string ?? "").split(separator: ",").map(String.init)
            )
            try RolloutListing.add(
                to: &list,
                rollout,
                started: Date(timeIntervalSince1970: row.column("updated_at")?.double ?? 0),
                status: row.column("status").flatMap { $0.isNull ? nil : $0.string },
                count: row.column("devices")?.integer.map { Int($0) } ?? 0
            )
        }
        return list
    }

    public func close() async {
        // Not in the caller's task: a cancelled task (Ctrl-C) would skip the close, and an open
        // connection must not be released.
        let connection = self.connection
        await Task.detached { try? await connection.close() }.value
        if lockDescriptor >= 0 {
            releaseLock(lockDescriptor)
            lockDescriptor = -1
        }
    }

    private func records(_ rollout: String) async throws -> [DeviceRecord] {
        let rows = try await query("SELECT * FROM devices WHERE rollout = ?1 ORDER BY position", [.text(rollout)])
        return try rows.map(Self.record)
    }

    private func run(_ sql: String, _ binds: [SQLiteData]) async throws {
        _ = try await query(sql, binds)
    }

    private func query(_ sql: String, _ binds: [SQLiteData]) async throws -> [SQLiteRow] {
        do {
            return try await connection.query(sql, binds)
        } catch {
            throw RolloutStoreError("\(path): \(error)")
        }
    }

    static func binds(_ record: DeviceRecord, rollout: String) -> [SQLiteData] {
        [.text(rollout)]
            + DeviceRow.values(record).map { value in
                switch value {
                case .text(let text): text.map { .text($0) } ?? .null
                case .integer(let number): .integer(number)
                case .time(let date): date.map { .float($0.timeIntervalSince1970) } ?? .null
                }
            }
    }

    static func record(_ row: SQLiteRow) throws -> DeviceRecord {
        try DeviceRow.record(
            text: { row.column($0).flatMap { $0.isNull ? nil : $0.string } },
            integer: { row.column($0)?.integer.map { Int($0) } ?? 0 },
            time: { row.column($0).flatMap { $0.isNull ? nil : $0.double }.map(Date.init(timeIntervalSince1970:)) }
        )
    }
}

/// `close(2)`, named apart from the store's `close()`.
private func closeDescriptor(_ descriptor: Int32) {
    _ = close(descriptor)
}

/// Unlocks, then closes. Closing alone is not enough: the lock belongs to the open file, which a
/// child process being started in that moment (by any thread of this process) shares until it
/// runs its program, so the lock outlived the close and the next open of the same state file in
/// this process was refused as "another mcumgr fleet process".
private func releaseLock(_ descriptor: Int32) {
    _ = flock(descriptor, LOCK_UN)
    closeDescriptor(descriptor)
}
