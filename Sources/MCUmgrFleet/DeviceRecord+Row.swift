import Foundation
import MCUmgrDFU

/// A device record as a store's row: every column once, in one order, for both stores (SQLite and
/// PostgreSQL write the same columns; each store only maps ``Value`` to its own types).
package enum DeviceRow {
    /// The version of the stores' layout. 1: the layout of every state written so far (files
    /// written before the version was stored are version 1). A store that finds a higher version
    /// refuses it; a lower one is migrated when it is opened.
    package static let schemaVersion = 1

    /// A column's value, in the few kinds the stores need.
    package enum Value: Sendable, Equatable {
        case text(String?)
        case integer(Int)
        case time(Date?)
    }

    /// A column's kind and whether it may be null, for each store's `CREATE TABLE`.
    package enum Kind: Sendable {
        case text, integer, time
    }

    /// The columns after `rollout`, in order: name, kind, nullable.
    package static let columns: [(name: String, kind: Kind, nullable: Bool)] = [
        ("id", .text, false), ("url", .text, false), ("position", .integer, false), ("labels", .text, false),
        ("status", .text, false), ("phase", .text, true), ("attempts", .integer, false),
        ("link_failures", .integer, false), ("not_before", .time, true), ("failure_code", .text, true),
        ("failure_state", .text, true), ("failure_message", .text, true), ("version_before", .text, true),
        ("version_after", .text, true), ("started_at", .time, true), ("ended_at", .time, true),
        ("worker", .text, true), ("uploaded_bytes", .integer, false), ("first_started_at", .time, true),
    ]

    /// The record's values, in ``columns`` order.
    package static func values(_ record: DeviceRecord) -> [Value] {
        [
            .text(record.id), .text(record.url), .integer(record.position),
            .text(StoredLabels.encode(record.labels)), .text(record.status.rawValue), .text(record.phase?.description),
            .integer(record.attempts), .integer(record.linkFailures), .time(record.notBefore),
            .text(record.failure?.code.rawValue), .text(record.failure?.state?.rawValue),
            .text(record.failure?.message), .text(record.versionBefore), .text(record.versionAfter),
            .time(record.startedAt), .time(record.endedAt), .text(record.worker), .integer(record.uploadedBytes),
            .time(record.firstStartedAt),
        ]
    }

    /// A record from a row, read column by column.
    /// - Parameters:
    ///   - text: a text column's value (`nil` when null).
    ///   - integer: an integer column's value.
    ///   - time: a time column's value (`nil` when null).
    /// - Throws: ``RolloutStoreError`` for a row without an identity, a URL or a known status.
    package static func record(
        text: (String) throws -> String?,
        integer: (String) throws -> Int,
        time: (String) throws -> Date?
    ) throws -> DeviceRecord {
        guard let id = try text("id"), let url = try text("url"), let statusText = try text("status"),
            let status = DeviceRecord.Status(rawValue: statusText)
        else {
            throw RolloutStoreError("a device row is damaged (identity, URL or status '\(try text("status") ?? "")')")
        }
        var record = DeviceRecord(
            id: id,
            url: url,
            position: try integer("position"),
            labels: StoredLabels.decode(try text("labels"))
        )
        record.status = status
        record.phase = try text("phase").flatMap(RolloutPhase.init)
        record.attempts = try integer("attempts")
        record.linkFailures = try integer("link_failures")
        record.notBefore = try time("not_before")
        record.failure = AttemptFailure(
            storedCode: try text("failure_code"),
            state: try text("failure_state"),
            message: try text("failure_message")
        )
        record.versionBefore = try text("version_before")
        record.versionAfter = try text("version_after")
        record.startedAt = try time("started_at")
        record.firstStartedAt = try time("first_started_at")
        record.endedAt = try time("ended_at")
        record.worker = try text("worker")
        record.uploadedBytes = try integer("uploaded_bytes")
        return record
    }

    /// The column list and the `CREATE TABLE` body's device columns for a store.
    /// - Parameter type: the store's type name for a kind.
    package static func columnDefinitions(_ type: (Kind) -> String) -> String {
        columns.map { "\($0.name) \(type($0.kind))\($0.nullable ? "" : " NOT NULL")" }.joined(separator: ", ")
    }

    /// The names, comma-separated.
    package static var columnList: String { columns.map(\.name).joined(separator: ", ") }

    /// The line for a store whose layout is newer than this version reads.
    /// - Parameters:
    ///   - place: the file or database.
    ///   - version: the version it holds.
    package static func tooNew(_ place: String, version: Int) -> RolloutStoreError {
        RolloutStoreError(
            "\(place) holds rollout state of layout \(version), written by a newer mcumgr (this one reads up to "
                + "\(schemaVersion)): use that mcumgr, or another --state"
        )
    }
}

/// Labels stored as one text column: JSON, keys sorted.
enum StoredLabels {
    static func encode(_ labels: [String: String]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return (try? encoder.encode(labels)).flatMap { String(data: $0, encoding: .utf8) } ?? "{}"
    }

    static func decode(_ text: String?) -> [String: String] {
        guard let data = text?.data(using: .utf8) else { return [:] }
        return (try? JSONDecoder().decode([String: String].self, from: data)) ?? [:]
    }
}
