import Foundation
import Logging
import MCUmgrDFU
import MCUmgrFleet
import PostgresNIO

extension PostgresRolloutStore {
    /// Every device record of a rollout, in inventory order.
    static func records(
        _ rollout: String,
        _ connection: PostgresConnection,
        _ logger: Logger,
        leases: Bool = false
    ) async throws -> [DeviceRecord] {
        let rows = try await connection.query(
            "SELECT * FROM mcumgr_devices WHERE rollout = \(rollout) ORDER BY position",
            logger: logger
        )
        var records: [DeviceRecord] = []
        for try await row in rows {
            var record = try record(row.makeRandomAccess())
            if !leases { record.leaseUntil = nil }
            records.append(record)
        }
        return records
    }

    static func record(_ row: PostgresRandomAccessRow) throws -> DeviceRecord {
        var record = try DeviceRow.record(
            text: { try row[$0].decode(String?.self) },
            integer: { try row[$0].decode(Int.self) },
            time: { try row[$0].decode(Date?.self) }
        )
        record.leaseUntil = try row["lease_until"].decode(Date?.self)
        return record
    }

    /// The devices table's device columns, in PostgreSQL's types.
    static let deviceColumns = DeviceRow.columnDefinitions { kind in
        switch kind {
        case .text: "TEXT"
        case .integer: "BIGINT"
        case .time: "TIMESTAMPTZ"
        }
    }

    /// Inserts or replaces a device's row.
    static func write(
        _ record: DeviceRecord,
        rollout: String,
        lease: Date?,
        _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        var binds = PostgresBindings()
        binds.append(rollout)
        for value in DeviceRow.values(record) {
            switch value {
            case .text(let text): binds.append(text)
            case .integer(let number): binds.append(number)
            case .time(let date): binds.append(date)
            }
        }
        binds.append(lease)
        let names = ["rollout"] + DeviceRow.columns.map(\.name) + ["lease_until"]
        let placeholders = names.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        let updates = names.dropFirst(2).map { "\($0) = EXCLUDED.\($0)" }.joined(separator: ", ")
        let sql = """
            INSERT INTO mcumgr_devices (\(names.joined(separator: ", "))) VALUES (\(placeholders))
            ON CONFLICT (rollout, id) DO UPDATE SET \(updates)
            """
        try await connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
    }
}

/// A first-in, first-out lock for async code: one transaction at a time on a connection (an
/// actor alone would interleave two transactions at their awaits).
actor AsyncMutex {
    private var locked = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func lock() async {
        guard locked else {
            locked = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func unlock() {
        guard !waiters.isEmpty else {
            locked = false
            return
        }
        waiters.removeFirst().resume()
    }
}
