import Foundation
import MCUmgrDFU
import MCUmgrFleet
import Testing

@testable import MCUmgrCommands

/// The end of a fleet run as people and scripts read it: the table's SEEN column, the last line
/// and the JSON summary say which devices this run saw and which it only shows from the state.
@Suite struct FleetProgressViewTests {
    /// 2026-11-27 15:00 UTC.
    static let now = Date(timeIntervalSince1970: 1_795_791_600)

    static func utc() throws -> TimeZone { try #require(TimeZone(identifier: "UTC")) }

    static func record(
        _ id: String,
        _ status: DeviceRecord.Status,
        attempts: Int,
        endedSecondsAgo: Double?,
        worker: String? = nil
    ) -> DeviceRecord {
        var record = DeviceRecord(id: id, url: "udp://127.0.0.1:2000", position: 0)
        record.status = status
        record.attempts = attempts
        record.worker = worker
        record.endedAt = endedSecondsAgo.map { now.addingTimeInterval(-$0) }
        switch status {
        case .upgraded:
            record.versionBefore = "1.0.0"
            record.versionAfter = "1.1.0"
        case .alreadyCurrent:
            record.versionAfter = "1.1.0"
        default:
            record.failure = AttemptFailure(code: .skipped, state: nil, message: "the canary failed")
        }
        return record
    }

    static let records = [
        record("d1", .upgraded, attempts: 1, endedSecondsAgo: 60),
        record("d2", .upgraded, attempts: 1, endedSecondsAgo: 3480),
        record("d3", .alreadyCurrent, attempts: 0, endedSecondsAgo: 86_400),
        record("d4", .skipped, attempts: 0, endedSecondsAgo: 30),
    ]

    static let outcome = RolloutOutcome(
        records: records,
        halt: nil,
        interrupted: false,
        started: ["d1"],
        endedBefore: ["d2", "d3"]
    )

    @Test func theTableSaysWhichDevicesThisRunSawAndWhichItShowsFromAnEarlierRun() throws {
        #expect(
            FleetProgressView.deviceTable(Self.records, outcome: Self.outcome, now: Self.now, timeZone: try Self.utc())
                == [
                    "DEVICE  STATUS           VERSION           TRIES  SEEN                           DETAIL",
                    "d1      upgraded         1.0.0→1.1.0       1      this run",
                    "d2      upgraded         1.0.0→1.1.0       1      earlier run, 14:02",
                    "d3      already-current  1.1.0             0      earlier run, 2026-11-26 15:00",
                    "d4      skipped                            0      not contacted                  skipped: the canary failed",
                ]
        )
        #expect(
            FleetProgressView.sourcesLine(Self.outcome)
                == "this run contacted 1 device; 2 shown from an earlier run; 1 not contacted"
        )
    }

    /// `fleet status` shows the state alone: no SEEN column.
    @Test func theStatusTableHasNoSeenColumn() {
        #expect(
            FleetProgressView.deviceTable(Array(Self.records.prefix(1)))
                == [
                    "DEVICE  STATUS           VERSION           TRIES  DETAIL",
                    "d1      upgraded         1.0.0→1.1.0       1",
                ]
        )
    }

    @Test func aRunThatContactedNobodySaysSo() {
        let outcome = RolloutOutcome(
            records: Array(Self.records.prefix(3)),
            halt: nil,
            interrupted: false,
            endedBefore: ["d1", "d2", "d3"]
        )
        #expect(FleetProgressView.sourcesLine(outcome) == "this run contacted no device; 3 shown from an earlier run")
        #expect(outcome.isSuccess, "the rollout's outcome: every device ran the image, at its URL")
    }

    @Test func devicesOfOtherWorkersAreNamedWithTheirWorker() throws {
        let records = [
            Self.record("d1", .upgraded, attempts: 1, endedSecondsAgo: 60, worker: "gw1"),
            Self.record("d2", .upgraded, attempts: 1, endedSecondsAgo: 120, worker: "gw2"),
        ]
        let outcome = RolloutOutcome(
            records: records,
            halt: nil,
            interrupted: false,
            started: ["d1"],
            worker: "gw1"
        )
        let utc = try Self.utc()
        #expect(
            records.map { FleetProgressView.seen($0, outcome, now: Self.now, timeZone: utc) }
                == ["this run", "worker gw2, 14:58"]
        )
        #expect(FleetProgressView.sourcesLine(outcome) == "this run contacted 1 device; 1 run by other workers")
    }

    @Test func theJSONSummaryCountsAndListsEveryDeviceWithItsSource() throws {
        let rendered = FleetProgressView.summaryJSON(Self.outcome).rendered()
        let json = try #require(
            try JSONSerialization.jsonObject(with: Data(rendered.utf8)) as? [String: Any],
            "\(rendered)"
        )
        #expect(json["contacted"] as? Int == 1)
        #expect(
            json["sources"] as? [String: Int]
                == ["this_run": 1, "earlier_run": 2, "another_worker": 0, "not_contacted": 1]
        )
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.map { $0["device"] as? String } == ["d1", "d2", "d3", "d4"])
        #expect(
            devices.map { $0["source"] as? String } == ["this_run", "earlier_run", "earlier_run", "not_contacted"]
        )
        #expect(devices[1]["ended_at"] as? String == "2026-11-27T14:02:00Z")
    }

    /// A running device is running only while its worker holds it: a lapsed lease, or a state
    /// file no process holds, shows it abandoned, with the worker and what to do.
    @Test func aRunningDeviceWhoseWorkerIsGoneIsShownAbandoned() throws {
        let utc = try Self.utc()
        var record = Self.record("d5", .running, attempts: 1, endedSecondsAgo: nil, worker: "w1")
        record.failure = nil
        record.leaseUntil = Self.now.addingTimeInterval(20)
        #expect(
            FleetProgressView.running(record, processRuns: nil, now: Self.now, timeZone: utc)?.status == "running"
        )
        #expect(
            FleetProgressView.running(record, processRuns: nil, now: Self.now, timeZone: utc)?.detail.hasPrefix(
                "on w1, lease to "
            ) == true
        )
        record.leaseUntil = Self.now.addingTimeInterval(-5)
        let lapsed = try #require(FleetProgressView.running(record, processRuns: nil, now: Self.now, timeZone: utc))
        #expect(lapsed.status == "abandoned" && lapsed.detail.hasPrefix("w1's lease ended "), "\(lapsed)")
        record.leaseUntil = nil
        let gone = try #require(FleetProgressView.running(record, processRuns: false, now: Self.now, timeZone: utc))
        #expect(
            gone
                == ("abandoned", "the process on w1 ended before it did; run the same command again to resume")
        )
        #expect(FleetProgressView.running(record, processRuns: true, now: Self.now)?.status == "running")
        #expect(FleetProgressView.running(Self.records[0], processRuns: false, now: Self.now) == nil)
        let table = FleetProgressView.deviceTable([record], processRuns: false, now: Self.now, timeZone: utc)
        #expect(table.last?.contains("abandoned") == true, "\(table)")
    }

    /// The live block is cleared from the line's start: the terminal echoes Ctrl-C as "^C" at the
    /// cursor, and moving up keeps the column, so the table after an interrupt began two
    /// columns in.
    @Test func theLiveBlockIsClearedFromTheStartOfTheLine() {
        let partial = LockedLines()
        Console.$error.withValue(Console.Sink(isTerminal: true, writePartial: partial.append, write: { _ in })) {
            var view = FleetProgressView(style: .terminal, policy: RolloutPolicy(waves: [.percent(100)]))
            let rollout = RolloutDescription(
                id: "0123456789abcdef",
                file: "app.bin",
                mode: "test-and-confirm",
                versions: []
            )
            let record = DeviceRecord(id: "d1", url: "udp://127.0.0.1:2000", position: 0)
            view.show(.prepared(rollout, [record]))
            view.show(.started(record))
            view.show(.upgrade(device: "d1", .stateChanged(from: .idle, to: .requestingParameters)))
            view.show(.phase(.canary))
        }
        let moves = partial.all.filter { $0.contains("\u{1B}[") && $0.contains("A\u{1B}[J") }
        #expect(!moves.isEmpty, "the block was never cleared: \(partial.all)")
        #expect(moves.allSatisfy { $0.hasPrefix("\r\u{1B}[") }, "\(moves)")
    }

    /// `fleet status --list`: a header and one line per rollout, aligned, the counts last.
    @Test func theListOfRolloutsIsAlignedWithItsCountsLast() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let listings = [
            RolloutListing(
                rollout: RolloutDescription(
                    id: "ab12-confirm-only",
                    file: "app.bin",
                    mode: "confirm-only",
                    versions: ["2.0.0"]
                ),
                started: now - 60,
                counts: [.failed: 1, .upgraded: 9]
            ),
            RolloutListing(
                rollout: RolloutDescription(
                    id: "cd34-test",
                    file: "a-longer-name.zip",
                    mode: "test",
                    versions: ["1.1.0", "1.0.1"]
                ),
                started: now - 3 * 86_400,
                counts: [:]
            ),
        ]
        #expect(
            FleetProgressView.list(listings, now: now, timeZone: utc) == [
                "ROLLOUT            FILE               MODE          VERSIONS     STARTED           DEVICES",
                "ab12-confirm-only  app.bin            confirm-only  2.0.0        07:59             9 upgraded, 1 failed",
                "cd34-test          a-longer-name.zip  test          1.1.0,1.0.1  2027-01-12 08:00  no devices",
            ]
        )
        #expect(FleetProgressView.list([], now: now, timeZone: utc) == ["the state holds no rollout yet"])
    }

    /// A file name outside ASCII (one character, two UTF-16 units) keeps the later columns where
    /// the header puts them: columns are counted in characters, not in UTF-16 units.
    @Test func theListAlignsNamesOutsideASCII() {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let listings = ["📟.bin", "ab.bin"].enumerated().map { index, file in
            RolloutListing(
                rollout: RolloutDescription(id: "r\(index)", file: file, mode: "test", versions: ["2.0.0"]),
                started: now,
                counts: [.upgraded: 1]
            )
        }
        let lines = FleetProgressView.list(listings, now: now, timeZone: TimeZone(identifier: "UTC") ?? .current)
        let modeColumns = lines.map {
            $0.distance(from: $0.startIndex, to: $0.range(of: "test")?.lowerBound ?? $0.endIndex)
        }
        #expect(lines.count == 3)
        #expect(modeColumns[1] == modeColumns[2], "\(lines)")
    }
}
