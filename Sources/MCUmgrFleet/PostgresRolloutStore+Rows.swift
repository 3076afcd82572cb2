import Foundation
import Logging
import MCUmgrDFU
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
        let statusText = try row["status"].decode(String.self)
        guard let status = DeviceRecord.Status(rawValue: statusText) else {
            throw RolloutStoreError("a device row has an unknown status '\(statusText)'")
        }
        let labels = StoredLabels.decode(try row["labels"].decode(String.self))
        var record = DeviceRecord(
            id: try row["id"].decode(String.self),
            url: try row["url"].decode(String.self),
            position: try row["position"].decode(Int.self),
            labels: labels
        )
        record.status = status
        record.phase = try row["phase"].decode(String?.self).flatMap(RolloutPhase.init)
        record.attempts = try row["attempts"].decode(Int.self)
        record.linkFailures = try row["link_failures"].decode(Int.self)
        record.notBefore = try row["not_before"].decode(Date?.self)
        record.failure = AttemptFailure(
            storedCode: try row["failure_code"].decode(String?.self),
            state: try row["failure_state"].decode(String?.self),
            message: try row["failure_message"].decode(String?.self)
        )
        record.versionBefore = try row["version_before"].decode(String?.self)
        record.versionAfter = try row["version_after"].decode(String?.self)
        record.startedAt = try row["started_at"].decode(Date?.self)
        record.firstStartedAt = try row["first_started_at"].decode(Date?.self)
        record.endedAt = try row["ended_at"].decode(Date?.self)
        record.worker = try row["worker"].decode(String?.self)
        record.uploadedBytes = try row["uploaded_bytes"].decode(Int.self)
        record.leaseUntil = try row["lease_until"].decode(Date?.self)
        return record
    }

    /// Inserts or replaces a device's row.
    static func write(
        _ record: DeviceRecord,
        rollout: String,
        lease: Date?,
        _ connection: PostgresConnection,
        _ logger: Logger
    ) async throws {
        let labels = StoredLabels.encode(record.labels)
        try await connection.query(
            """
            INSERT INTO mcumgr_devices (rollout, id, url, position, labels, status, phase, attempts, link_failures,
                not_before, failure_code, failure_state, failure_message, version_before, version_after, started_at,
                ended_at, worker, uploaded_bytes, first_started_at, lease_until)
            VALUES (\(rollout), \(record.id), \(record.url), \(record.position), \(labels), \(record.status.rawValue),
                \(record.phase?.description), \(record.attempts), \(record.linkFailures), \(record.notBefore),
                \(record.failure?.code.rawValue), \(record.failure?.state?.rawValue), \(record.failure?.message), \(record.versionBefore),
                \(record.versionAfter), \(record.startedAt), \(record.endedAt), \(record.worker), \(record.uploadedBytes),
                \(record.firstStartedAt), \(lease))
            ON CONFLICT (rollout, id) DO UPDATE SET url = EXCLUDED.url, position = EXCLUDED.position,
                labels = EXCLUDED.labels, status = EXCLUDED.status, phase = EXCLUDED.phase, attempts = EXCLUDED.attempts,
                link_failures = EXCLUDED.link_failures, not_before = EXCLUDED.not_before,
                failure_code = EXCLUDED.failure_code, failure_state = EXCLUDED.failure_state,
                failure_message = EXCLUDED.failure_message, version_before = EXCLUDED.version_before,
                version_after = EXCLUDED.version_after, started_at = EXCLUDED.started_at, ended_at = EXCLUDED.ended_at,
                worker = EXCLUDED.worker, uploaded_bytes = EXCLUDED.uploaded_bytes,
                first_started_at = EXCLUDED.first_started_at, lease_until = EXCLUDED.lease_until
            """,
            logger: logger
        )
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
