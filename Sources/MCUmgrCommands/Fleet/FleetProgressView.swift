import Foundation
import MCUmgrDFU
import MCUmgrFleet

/// Draws a rollout: on a terminal, a live block on stderr (a line per device in flight: name,
/// state, percent, rate; a summary line: done, failed, remaining, ETA, budget left) with ended
/// devices scrolling above it; without a terminal, one line per device event on stderr; with
/// `--json`, one object per device event on stdout, then a summary object. The final table goes
/// to stdout.
struct FleetProgressView {
    let style: TransferProgressView.Style
    let policy: RolloutPolicy
    private var records: [String: DeviceRecord] = [:]
    private var order: [String] = []
    private var inFlight: [String: (state: FirmwareUpgrade.State, progress: FirmwareUpgrade.UploadProgress?)] = [:]
    private var lastStep: [String: Int] = [:]
    private var drawnLines = 0
    private var lastDraw: ContinuousClock.Instant?
    private let clock = ContinuousClock()
    private let started = ContinuousClock.now
    private var endedThisRun = 0

    init(style: TransferProgressView.Style, policy: RolloutPolicy) {
        self.style = style
        self.policy = policy
    }

    mutating func show(_ event: FleetEvent) {
        switch event {
        case .prepared(let rollout, let list):
            for record in list {
                records[record.id] = record
                order.append(record.id)
            }
            let ended = list.count { $0.status.isFinal }
            note(
                "rollout",
                "\(rollout.file) (\(rollout.mode), rollout \(rollout.id)): \(list.count) devices"
                    + (ended > 0 ? ", \(ended) already ended in an earlier run" : ""),
                fields: [("rollout", .string(rollout.id)), ("devices", .int(Int64(list.count)))]
            )
        case .replanned(let earlier, let now):
            records[now.id] = now
            let when = earlier.endedAt.map { ", " + Self.clock($0) } ?? ""
            note(
                "replanned",
                "\(now.id): recorded at \(earlier.url) (\(earlier.status)\(when)), this inventory has \(now.url): "
                    + "another device, planned afresh",
                fields: [
                    ("device", .string(now.id)), ("url", .string(now.url)), ("recorded_url", .string(earlier.url)),
                    ("recorded_status", .string(earlier.status.rawValue)),
                ]
            )
        case .phase(let phase):
            note("phase", "\(phase) begins", fields: [("phase", .string(phase.description))])
        case .started(let record):
            records[record.id] = record
            inFlight[record.id] = (.idle, nil)
            deviceEvent(
                "started",
                record,
                text: "started (attempt \(record.attempts), \(record.phase?.description ?? ""))"
            )
        case .upgrade(let device, let upgradeEvent):
            upgrade(device, upgradeEvent)
        case .retrying(let record, let at):
            records[record.id] = record
            inFlight[record.id] = nil
            let wait = max(0, at.timeIntervalSinceNow)
            deviceEvent(
                "retry",
                record,
                text: String(format: "link failed (%@); retrying in %.0f s", record.failure?.message ?? "", wait)
            )
        case .ended(let record):
            records[record.id] = record
            inFlight[record.id] = nil
            endedThisRun += 1
            deviceEvent("ended", record, text: Self.outcomeText(record))
        case .halted(let reason):
            note("halted", "the rollout halted: \(reason); upgrades in flight finish", fields: [])
        case .finished(let outcome):
            clearBlock()
            finish(outcome)
        }
        redraw()
    }

    private mutating func upgrade(_ device: String, _ event: FirmwareUpgrade.Event) {
        switch event {
        case .stateChanged(_, let to):
            inFlight[device]?.state = to
            if style == .json, let record = records[device] {
                emitDevice("state", record, extra: [("state", .string(to.rawValue))])
            }
        case .uploadProgress(let progress):
            inFlight[device]?.progress = progress
            let step = progress.totalBytes == 0 ? 10 : progress.totalBytesConfirmed * 10 / progress.totalBytes
            guard style != .terminal, step > lastStep[device, default: -1], let record = records[device] else { return }
            lastStep[device] = step
            if style == .json {
                emitDevice(
                    "progress",
                    record,
                    extra: [
                        ("percent", .int(Int64(step * 10))), ("rate", .double((progress.bytesPerSecond).rounded())),
                    ]
                )
            }
        case .warning(let text):
            if let record = records[device] { deviceEvent("warning", record, text: text) }
        default:
            break
        }
    }

    // MARK: - Lines and JSON

    private mutating func note(_ kind: String, _ text: String, fields: [(String, JSONValue)]) {
        if style == .json {
            CommandSupport.emit(.object([("event", .string(kind))] + fields + [("message", .string(text))]))
        } else {
            clearBlock()
            Console.err("» \(text)")
        }
    }

    private mutating func deviceEvent(_ kind: String, _ record: DeviceRecord, text: String) {
        switch style {
        case .json:
            emitDevice(kind, record, extra: kind == "ended" ? Self.jsonFields(record) : [("message", .string(text))])
        case .lines:
            Console.err("\(record.id): \(text)")
        case .terminal:
            // Ended devices and retries scroll above the live block; starts show in it.
            guard kind != "started" else { return }
            clearBlock()
            Console.err("\(record.id): \(text)")
        }
    }

    private func emitDevice(_ kind: String, _ record: DeviceRecord, extra: [(String, JSONValue)]) {
        CommandSupport.emit(.object([("event", .string(kind)), ("device", .string(record.id))] + extra))
    }

    static func outcomeText(_ record: DeviceRecord) -> String {
        switch record.status {
        case .upgraded: return "upgraded \(record.versionBefore ?? "?") → \(record.versionAfter ?? "?"), verified"
        case .alreadyCurrent: return "already current (\(record.versionAfter ?? "?")); nothing uploaded"
        case .failed, .unreachable, .skipped:
            let failure = record.failure?.summary ?? ""
            return "\(record.status): \(failure)"
        case .pending, .running: return "\(record.status)"
        }
    }

    // MARK: - The live block

    private mutating func redraw() {
        guard style == .terminal else { return }
        let now = clock.now
        if let lastDraw, now - lastDraw < .milliseconds(150) { return }
        lastDraw = now
        clearBlock()
        var lines = inFlight.keys.sorted { (records[$0]?.position ?? 0) < (records[$1]?.position ?? 0) }.prefix(20).map
        {
            device -> String in
            let entry = inFlight[device]
            var line = "  \(device)  \(entry?.state.rawValue ?? "")"
            if let progress = entry?.progress, entry?.state == .uploading {
                line += String(
                    format: "  %3d%%  %@/s",
                    Int(progress.fraction * 100),
                    TransferProgressView.bytes(Int(progress.bytesPerSecond))
                )
            }
            return line
        }
        if inFlight.count > 20 { lines.append("  … and \(inFlight.count - 20) more") }
        lines.append(summaryLine())
        for line in lines { Console.error.writePartial?(line + "\u{1B}[K\n") }
        drawnLines = lines.count
    }

    private mutating func clearBlock() {
        guard style == .terminal, drawnLines > 0 else { return }
        // `\r` first: the terminal echoes Ctrl-C as "^C" where the cursor is, and moving up keeps
        // the column, so without it the redrawn block and the table after it began two columns in.
        Console.error.writePartial?("\r\u{1B}[\(drawnLines)A\u{1B}[J")
        drawnLines = 0
    }

    private func summaryLine() -> String {
        let all = order.compactMap { records[$0] }
        let done = all.count { $0.status == .upgraded || $0.status == .alreadyCurrent }
        let failed = all.count { $0.status.isFailure }
        let remaining = all.count { !$0.status.isFinal }
        var line = "  done \(done) · failed \(failed) · remaining \(remaining)"
        let elapsed = TransferProgressView.seconds(clock.now - started)
        if endedThisRun > 0, remaining > 0 {
            let eta = elapsed / Double(endedThisRun) * Double(remaining)
            line += " · ETA " + TransferProgressView.clockTime(eta)
        }
        if let limit = policy.failureLimit(of: all.count) { line += " · budget left \(max(0, limit - failed))" }
        return line
    }

    // MARK: - The end

    private func finish(_ outcome: RolloutOutcome) {
        if style == .json {
            CommandSupport.emit(Self.summaryJSON(outcome))
            return
        }
        for line in Self.deviceTable(outcome.records, outcome: outcome) { Console.out(line) }
        Console.out(
            Self.countsLine(outcome.records) + (outcome.halt.map { "; halted: \($0)" } ?? "")
                + (outcome.interrupted ? "; interrupted" : "")
        )
        Console.out(Self.sourcesLine(outcome))
    }

    /// What this run saw and what it only shows: `this run contacted 2 devices; 1 shown from an
    /// earlier run`, or `this run contacted no device; 3 shown from an earlier run`.
    static func sourcesLine(_ outcome: RolloutOutcome) -> String {
        let sources = outcome.sources
        func devices(_ count: Int) -> String { count == 1 ? "1 device" : "\(count) devices" }
        let contacted = sources[.thisRun, default: 0]
        var parts = [contacted == 0 ? "this run contacted no device" : "this run contacted \(devices(contacted))"]
        let others: [(RolloutOutcome.Source, String)] = [
            (.earlierRun, "shown from an earlier run"), (.anotherWorker, "run by other workers"),
            (.notContacted, "not contacted"),
        ]
        for (source, text) in others where sources[source, default: 0] > 0 {
            parts.append("\(sources[source, default: 0]) \(text)")
        }
        return parts.joined(separator: "; ")
    }

    /// A device's SEEN column: `this run`, `earlier run, 14:02`, `worker gw2, 14:03`, `not contacted`.
    static func seen(
        _ record: DeviceRecord,
        _ outcome: RolloutOutcome,
        now: Date = Date(),
        timeZone: TimeZone = .current
    )
        -> String
    {
        let when = record.endedAt.map { ", " + clock($0, now: now, timeZone: timeZone) } ?? ""
        switch outcome.source(of: record) {
        case .thisRun: return "this run"
        case .earlierRun: return "earlier run" + when
        case .anotherWorker: return "worker \(record.worker ?? "?")" + when
        case .notContacted: return "not contacted"
        }
    }

    /// What a running record means now: `running` on a worker that holds it, or `abandoned` when
    /// its lease ran out (PostgreSQL) or no process holds the state file any more (SQLite; given
    /// as `processRuns`). `nil` for a device that is not running.
    static func running(
        _ record: DeviceRecord,
        processRuns: Bool?,
        now: Date = Date(),
        timeZone: TimeZone = .current
    ) -> (status: String, detail: String)? {
        guard record.status == .running else { return nil }
        let worker = record.worker ?? "?"
        func time(_ date: Date) -> String {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = timeZone
            formatter.dateFormat = "HH:mm:ss"
            return formatter.string(from: date)
        }
        if let lease = record.leaseUntil {
            guard lease <= now else { return ("running", "on \(worker), lease to \(time(lease))") }
            return (
                "abandoned",
                "\(worker)'s lease ended \(time(lease)); the next worker to claim plans it again from its own image list"
            )
        }
        if processRuns == false {
            return ("abandoned", "the process on \(worker) ended before it did; run the same command again to resume")
        }
        return ("running", "on \(worker)")
    }

    /// A time as people read it in a table: `14:02` today, `2026-11-26 14:02` another day.
    static func clock(_ date: Date, now: Date = Date(), timeZone: TimeZone = .current) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = timeZone
        formatter.dateFormat = calendar.isDate(date, inSameDayAs: now) ? "HH:mm" : "yyyy-MM-dd HH:mm"
        return formatter.string(from: date)
    }

    static func countsLine(_ records: [DeviceRecord]) -> String {
        DeviceRecord.Status.countsLine(DeviceRecord.Status.counts(of: records))
    }

    /// The rollouts a state holds (`fleet status --list`), one line each under a header.
    static func list(_ listings: [RolloutListing], now: Date = Date(), timeZone: TimeZone = .current) -> [String] {
        guard !listings.isEmpty else { return ["the state holds no rollout yet"] }
        let rows = listings.map { listing in
            [
                listing.rollout.id, listing.rollout.file, listing.rollout.mode,
                listing.rollout.versions.joined(separator: ","),
                clock(listing.started, now: now, timeZone: timeZone),
                listing.counts.isEmpty ? "no devices" : DeviceRecord.Status.countsLine(listing.counts),
            ]
        }
        return CommandSupport.table(["ROLLOUT", "FILE", "MODE", "VERSIONS", "STARTED", "DEVICES"], rows)
    }

    /// The same as one JSON document: `{"rollouts": [{id, file, mode, versions, started, counts}]}`.
    static func listJSON(_ listings: [RolloutListing]) -> JSONValue {
        .object([
            (
                "rollouts",
                .array(
                    listings.map { listing in
                        .object([
                            ("id", .string(listing.rollout.id)), ("file", .string(listing.rollout.file)),
                            ("mode", .string(listing.rollout.mode)),
                            ("versions", .array(listing.rollout.versions.map { .string($0) })),
                            ("started", .string(ISO8601DateFormatter().string(from: listing.started))),
                            ("counts", counts(listing.counts)),
                        ])
                    }
                )
            )
        ])
    }

    /// The device table; with a run's outcome, a SEEN column says which devices this run saw and
    /// which it shows from an earlier run (`fleet status` shows only the state, without it).
    static func deviceTable(
        _ records: [DeviceRecord],
        outcome: RolloutOutcome? = nil,
        processRuns: Bool? = nil,
        now: Date = Date(),
        timeZone: TimeZone = .current
    ) -> [String] {
        let width = min(40, max(6, records.map(\.id.count).max() ?? 6))
        func pad(_ text: String, _ count: Int) -> String {
            text.count >= count ? text : text + String(repeating: " ", count: count - text.count)
        }
        var column: [String]?
        if let outcome {
            column = records.map { record in Self.seen(record, outcome, now: now, timeZone: timeZone) }
        }
        let seenWidth: Int = max(4, column?.map(\.count).max() ?? 0) + 2
        let seenHeader: String = column == nil ? "" : pad("SEEN", seenWidth)
        var lines = [
            pad("DEVICE", width) + "  " + pad("STATUS", 17) + pad("VERSION", 18) + "TRIES  " + seenHeader + "DETAIL"
        ]
        for (index, record) in records.enumerated() {
            let version: String
            switch record.status {
            case .upgraded: version = "\(record.versionBefore ?? "?")→\(record.versionAfter ?? "?")"
            default: version = record.versionAfter ?? record.versionBefore ?? ""
            }
            var status = record.status.rawValue
            var detail =
                record.status == .upgraded || record.status == .alreadyCurrent
                ? "" : record.failure?.summary ?? ""
            if let running = Self.running(record, processRuns: processRuns, now: now, timeZone: timeZone) {
                (status, detail) = running
            }
            let seenText: String = column.map { pad($0[index], seenWidth) } ?? ""
            let line: String =
                pad(record.id, width) + "  " + pad(status, 17) + pad(version, 18)
                + pad("\(record.attempts)", 7) + seenText + detail
            // STATUS is 17 wide so that `already-current` keeps a gap before the version; nothing
            // pads the end of a line (an empty DETAIL left trailing spaces).
            lines.append(String(line.reversed().drop { $0 == " " }.reversed()))
        }
        return lines
    }

    static func table(_ rollout: RolloutDescription, _ records: [DeviceRecord], processRuns: Bool? = nil) -> [String] {
        [
            "rollout \(rollout.id): \(rollout.file) (\(rollout.mode)\(rollout.versions.isEmpty ? "" : ", " + rollout.versions.joined(separator: ", ")))"
        ]
            + deviceTable(records, processRuns: processRuns) + [countsLine(records)]
    }

    static func jsonFields(_ record: DeviceRecord) -> [(String, JSONValue)] {
        func text(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
        return [
            ("status", .string(record.status.rawValue)), ("url", .string(record.url)),
            ("phase", text(record.phase?.description)), ("attempts", .int(Int64(record.attempts))),
            ("version_before", text(record.versionBefore)), ("version_after", text(record.versionAfter)),
            ("uploaded_bytes", .int(Int64(record.uploadedBytes))), ("worker", text(record.worker)),
            ("ended_at", text(record.endedAt.map { ISO8601DateFormatter().string(from: $0) })),
            ("lease_until", text(record.leaseUntil.map { ISO8601DateFormatter().string(from: $0) })),
            (
                "error",
                record.failure.map {
                    .object([
                        ("code", .string($0.code.rawValue)), ("kind", $0.code.kind.map { .string($0) } ?? .null),
                        ("state", $0.state.map { .string($0.rawValue) } ?? .null), ("message", .string($0.message)),
                    ])
                } ?? .null
            ),
        ]
    }

    static func countsJSON(_ records: [DeviceRecord]) -> JSONValue {
        counts(DeviceRecord.Status.counts(of: records))
    }

    private static func counts(_ counts: [DeviceRecord.Status: Int]) -> JSONValue {
        .object(
            DeviceRecord.Status.allCases.map { status in
                (status.rawValue.replacingOccurrences(of: "-", with: "_"), .int(Int64(counts[status, default: 0])))
            }
        )
    }

    /// The last object of a run: counts, then what this run saw (`contacted`, `sources`) and every
    /// device with its `source` — the JSON of the final table.
    static func summaryJSON(_ outcome: RolloutOutcome) -> JSONValue {
        let sources = outcome.sources
        return .object([
            ("event", .string("summary")), ("counts", countsJSON(outcome.records)),
            ("halted", outcome.halt.map { .string("\($0)") } ?? .null), ("interrupted", .bool(outcome.interrupted)),
            ("contacted", .int(Int64(sources[.thisRun, default: 0]))),
            (
                "sources",
                .object(RolloutOutcome.Source.allCases.map { ($0.rawValue, .int(Int64(sources[$0, default: 0]))) })
            ),
            (
                "devices",
                .array(
                    outcome.records.map { record in
                        .object(
                            [
                                ("device", .string(record.id)),
                                ("source", .string(outcome.source(of: record).rawValue)),
                            ] + jsonFields(record)
                        )
                    }
                )
            ),
        ])
    }

    /// `fleet status --json`: every device with, when it is running, whether it is `abandoned`.
    static func json(_ rollout: RolloutDescription, _ records: [DeviceRecord], processRuns: Bool? = nil)
        -> JSONValue
    {
        func device(_ record: DeviceRecord) -> JSONValue {
            let abandoned: JSONValue =
                running(record, processRuns: processRuns).map { .bool($0.status == "abandoned") } ?? .null
            return .object([("device", .string(record.id))] + jsonFields(record) + [("abandoned", abandoned)])
        }
        return .object([
            ("rollout", .string(rollout.id)), ("file", .string(rollout.file)), ("mode", .string(rollout.mode)),
            ("versions", .array(rollout.versions.map { .string($0) })), ("counts", countsJSON(records)),
            ("devices", .array(records.map(device))),
        ])
    }
}
