import Foundation
import MCUmgrConnect
import MCUmgrDFU
import MCUmgrFleet

/// Where the server's rollout stands, whole: what every tab receives, so a second tab, or this one
/// reopened, draws the same Fleet table, waves and budget as the tab that started it.
///
/// Built from the library's ``FleetEvent``s alone (``apply(_:)``), so the rules of the table are
/// tested without devices.
struct FleetSnapshot: Encodable, Sendable {
    /// One row of the Fleet table.
    struct Row: Codable, Sendable, Equatable {
        /// The device's name (or its URL when it has none).
        var device: String
        /// Its connection URL.
        var url: String
        /// The record's status (`pending`, `running`, `upgraded`, `already-current`, `failed`,
        /// `unreachable`, `skipped`).
        var status: String
        /// While it runs: the upgrade engine's state, e.g. `uploading`.
        var step: String?
        /// While it uploads: whole percent.
        var percent: Int?
        /// The version it ran before.
        var versionBefore: String?
        /// The version it runs after.
        var versionAfter: String?
        /// Attempts so far.
        var tries: Int
        /// Why it failed, or when it retries (the CLI's DETAIL column).
        var detail: String
        /// Whether this run contacted it (the CLI's SEEN column): `this run`, `earlier run`,
        /// `not contacted`, or `nil` while nothing says yet.
        var seen: String?
    }

    /// A count out of a total, for a `<progress>`.
    struct Gauge: Codable, Sendable, Equatable {
        var value: Int
        var max: Int
        var text: String
    }

    /// The rollout's own identity in this server, new for each start: with ``revision`` it lets
    /// a tab drop an answer that arrives after a newer live update (a halt's answer overtaken by
    /// the event that the rollout ended).
    var id: String
    /// Counts every change.
    var revision: Int
    /// The firmware file's name.
    var file: String
    /// The upgrade mode.
    var mode: String
    /// The library's rollout identity (package and mode), once prepared.
    var rollout: String?
    /// `running`, `halting`, `finished` (every device ended), `halted` (the canary or budget
    /// stopped it), `interrupted` (Halt: pending devices resume with the same file) or `failed`
    /// (the state could not be kept).
    var status: String
    /// The canary or wave in progress, e.g. `wave-2`.
    var phase: String?
    /// Waves brought to an end, of all (the canary counts as one when there is one).
    var waves: Gauge
    /// Failed or unreachable devices, of the budget.
    var budget: Gauge
    /// Every device, in inventory order.
    var devices: [Row]
    /// Why the rollout halted, as the CLI says it.
    var halt: String?
    /// The counts line and what this run contacted, as the CLI's final lines, once finished.
    var summary: [String]
    /// The one-line error, when it failed.
    var error: String?
    /// No more changes will come.
    var finished: Bool

    /// The policy's numbers the gauges need, kept beside the snapshot (not sent).
    private var policy: RolloutPolicy
    /// Each device's row in ``devices``: a thousand devices' events find their row at once.
    private var rowIndex: [String: Int]

    fileprivate enum CodingKeys: String, CodingKey {
        case id, revision, file, mode, rollout, status, phase, waves, budget, devices, halt, summary, error, finished
        /// ``Update``'s own.
        case base, changed
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try encodeHeader(into: &container)
        try container.encode(devices, forKey: .devices)
    }

    /// Everything but the rows.
    fileprivate func encodeHeader(into container: inout KeyedEncodingContainer<CodingKeys>) throws {
        try container.encode(id, forKey: .id)
        try container.encode(revision, forKey: .revision)
        try container.encode(file, forKey: .file)
        try container.encode(mode, forKey: .mode)
        try container.encodeIfPresent(rollout, forKey: .rollout)
        try container.encode(status, forKey: .status)
        try container.encodeIfPresent(phase, forKey: .phase)
        try container.encode(waves, forKey: .waves)
        try container.encode(budget, forKey: .budget)
        try container.encodeIfPresent(halt, forKey: .halt)
        try container.encode(summary, forKey: .summary)
        try container.encodeIfPresent(error, forKey: .error)
        try container.encode(finished, forKey: .finished)
    }

    /// A new rollout, before the library prepared it.
    /// - Parameters:
    ///   - file: the firmware file's name.
    ///   - mode: the mode.
    ///   - policy: the rollout's policy.
    ///   - inventory: the devices, in order.
    init(file: String, mode: String, policy: RolloutPolicy, inventory: Inventory) {
        id = UUID().uuidString
        revision = 0
        self.file = file
        self.mode = mode
        self.policy = policy
        rollout = nil
        status = "running"
        phase = nil
        waves = Gauge(value: 0, max: 1, text: "")
        budget = Gauge(value: 0, max: 1, text: "")
        let rows = inventory.devices.map {
            Row(
                device: $0.id,
                url: $0.url.description,
                status: DeviceRecord.Status.pending.rawValue,
                tries: 0,
                detail: ""
            )
        }
        devices = rows
        rowIndex = Dictionary(rows.indices.map { (rows[$0].device, $0) }, uniquingKeysWith: { first, _ in first })
        halt = nil
        summary = []
        error = nil
        finished = false
        records = [:]
        updateGauges()
    }

    /// The library's records by device, for the gauges.
    private var records: [String: DeviceRecord]

    /// Applies one event of the run.
    /// - Parameter event: the event.
    /// - Returns: whether anything the page shows changed (the tabs get the change with the
    ///   next batch, ``FleetOperation``).
    @discardableResult
    mutating func apply(_ event: FleetEvent) -> Bool {
        switch event {
        case .prepared(let description, let list):
            rollout = description.id
            for record in list { update(record, seen: record.status.isFinal ? "earlier run" : nil) }
        case .replanned(_, let now):
            update(now, seen: nil)
        case .phase(let phase):
            self.phase = phase.description
        case .started(let record):
            update(record, seen: "this run")
            setRow(record.id) {
                $0.step = "starting"
                $0.percent = nil
            }
        case .upgrade(let device, let upgradeEvent):
            return upgrade(device, upgradeEvent)
        case .retrying(let record, let at):
            update(record, seen: "this run")
            let wait = Swift.max(0, Int(at.timeIntervalSinceNow.rounded(.up)))
            setRow(record.id) {
                $0.detail = "\(record.failure?.summary ?? "link failed"); retrying in \(wait) s"
                $0.step = nil
                $0.percent = nil
            }
        case .ended(let record):
            update(record, seen: "this run")
        case .halted(let reason):
            halt = reason.description
            if status == "running" { status = "halting" }
        case .finished(let outcome):
            for record in outcome.records { update(record, seen: Self.seen(outcome.source(of: record))) }
            finish(outcome)
        }
        updateGauges()
        return true
    }

    /// The end without an outcome: the state could not be kept.
    /// - Parameter error: the one line.
    mutating func fail(_ error: String) {
        status = "failed"
        self.error = error
        finished = true
    }

    private mutating func finish(_ outcome: RolloutOutcome) {
        if outcome.interrupted {
            status = "interrupted"
        } else if outcome.halt != nil {
            status = "halted"
        } else {
            status = "finished"
        }
        halt = outcome.halt?.description ?? halt
        let countsLine = DeviceRecord.Status.countsLine(outcome.counts)
        let contacted = outcome.sources[.thisRun, default: 0]
        summary = [
            countsLine,
            contacted == 1 ? "this run contacted 1 device" : "this run contacted \(contacted) devices",
        ]
        if outcome.interrupted {
            summary.append("halted: devices not ended stay pending; start the same file and mode again to resume")
        }
        phase = nil
        finished = true
        for index in devices.indices {
            devices[index].step = nil
            devices[index].percent = nil
        }
    }

    private mutating func upgrade(_ device: String, _ event: FirmwareUpgrade.Event) -> Bool {
        switch event {
        case .stateChanged(_, let to):
            setRow(device) { $0.step = to.rawValue }
            return true
        case .uploadProgress(let progress):
            let percent = Int((progress.fraction * 100).rounded(.down))
            guard let index = rowIndex[device], devices[index].percent != percent else { return false }
            devices[index].percent = percent
            return true
        default:
            return false
        }
    }

    private mutating func update(_ record: DeviceRecord, seen: String?) {
        records[record.id] = record
        setRow(record.id) { row in
            row.url = record.url
            row.status = record.status.rawValue
            row.versionBefore = record.versionBefore
            row.versionAfter = record.versionAfter
            row.tries = record.attempts
            row.detail =
                record.status == .upgraded || record.status == .alreadyCurrent ? "" : record.failure?.summary ?? ""
            if record.status.isFinal {
                row.step = nil
                row.percent = nil
            }
            if let seen { row.seen = seen }
        }
    }

    private mutating func setRow(_ device: String, _ change: (inout Row) -> Void) {
        guard let index = rowIndex[device] else { return }
        change(&devices[index])
    }

    /// The waves brought to an end (each wave's cumulative end reached by ended devices, the
    /// canary first when there is one) and the failures against the budget.
    private mutating func updateGauges() {
        let total = devices.count
        let ended = devices.count { DeviceRecord.Status(rawValue: $0.status)?.isFinal == true }
        let ends = policy.waveEnds(of: total)
        let canary = policy.canary > 0 ? 1 : 0
        let canaryDone =
            canary == 1 && records.values.count { $0.phase == .canary && $0.status == .upgraded } >= policy.canary
        let phaseText = phase.map { ", now \($0)" } ?? ""
        waves = Gauge(
            value: ends.count { $0 <= ended } + (canaryDone ? 1 : 0),
            max: Swift.max(1, ends.count + canary),
            text: "\(ended) of \(total) devices ended\(phaseText)"
        )
        let failures = devices.count { DeviceRecord.Status(rawValue: $0.status)?.isFailure == true }
        if let limit = policy.failureLimit(of: total) {
            budget = Gauge(
                value: Swift.min(failures, Swift.max(1, limit)),
                max: Swift.max(1, limit),
                text: "\(failures) failed or unreachable; the budget allows \(limit)"
            )
        } else {
            budget = Gauge(value: 0, max: 1, text: "\(failures) failed or unreachable; no limit")
        }
    }

    private static func seen(_ source: RolloutOutcome.Source) -> String {
        switch source {
        case .thisRun: "this run"
        case .earlierRun: "earlier run"
        case .anotherWorker: "another worker"
        case .notContacted: "not contacted"
        }
    }
}

extension FleetSnapshot {
    /// What one tab's live stream sends for a snapshot: the whole snapshot first (or when the
    /// rollout changed), then everything but the rows plus the rows that changed since the
    /// stream's last message (`changed`, each with its `index`) and that message's revision
    /// (`base`). A page holding `base` draws the new snapshot from it; the rows of a thousand
    /// devices are not sent again for every step of one of them.
    struct Update: Encodable, Sendable {
        /// A row that changed, and where it is.
        struct ChangedRow: Encodable, Sendable, Equatable {
            var index: Int
            var row: Row
        }

        let snapshot: FleetSnapshot
        /// The revision the changes apply to; `nil` when the whole snapshot goes.
        let base: Int?
        let changed: [ChangedRow]

        /// The message for `snapshot` on a stream that sent `previous` before it.
        /// - Parameters:
        ///   - snapshot: the snapshot to send.
        ///   - previous: the stream's last message, or `nil` for its first.
        init(_ snapshot: FleetSnapshot, after previous: FleetSnapshot?) {
            self.snapshot = snapshot
            guard let previous, previous.id == snapshot.id, previous.devices.count == snapshot.devices.count else {
                base = nil
                changed = []
                return
            }
            base = previous.revision
            changed = zip(snapshot.devices, previous.devices).enumerated().compactMap { index, rows in
                rows.0 == rows.1 ? nil : ChangedRow(index: index, row: rows.0)
            }
        }

        func encode(to encoder: any Encoder) throws {
            guard let base else { return try snapshot.encode(to: encoder) }
            var container = encoder.container(keyedBy: CodingKeys.self)
            try snapshot.encodeHeader(into: &container)
            try container.encode(base, forKey: .base)
            try container.encode(changed, forKey: .changed)
        }
    }
}
