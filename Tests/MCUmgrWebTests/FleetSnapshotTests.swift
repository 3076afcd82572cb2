import Foundation
import MCUmgrDFU
import MCUmgrFleet
import Testing

@testable import MCUmgrWeb

/// The Fleet table, waves and budget, from the library's events alone.
@Suite struct FleetSnapshotTests {
    static func inventory() throws -> Inventory {
        try Inventory(parsing: "sim://?seed=1 a\nsim://?seed=2 b\nsim://?seed=3 c\nsim://?seed=4 d")
    }

    static func record(_ id: String, _ position: Int, _ status: DeviceRecord.Status, phase: RolloutPhase? = nil)
        -> DeviceRecord
    {
        var record = DeviceRecord(id: id, url: "sim://?seed=\(position + 1)", position: position)
        record.status = status
        record.phase = phase
        if status != .pending { record.attempts = 1 }
        if status == .upgraded {
            record.versionBefore = "1.0.0"
            record.versionAfter = "2.0.0"
        }
        if status == .failed {
            record.failure = AttemptFailure(code: .deviceRejected, state: .uploading, message: "the device said no")
        }
        return record
    }

    @Test func aRunFillsTheTableTheWavesAndTheBudget() throws {
        let policy = RolloutPolicy(waves: [.percent(50), .percent(100)], maxFailures: .count(1))
        var snapshot = FleetSnapshot(
            file: "app.bin",
            mode: "confirm-only",
            policy: policy,
            inventory: try Self.inventory()
        )
        #expect(snapshot.devices.map(\.status) == ["pending", "pending", "pending", "pending"])
        #expect(snapshot.waves.value == 0 && snapshot.waves.max == 2)
        #expect(snapshot.budget.max == 1 && snapshot.budget.text.contains("the budget allows 1"))

        // "d" had ended in an earlier run: the table says so.
        let earlier = [
            Self.record("a", 0, .pending), Self.record("b", 1, .pending), Self.record("c", 2, .pending),
            Self.record("d", 3, .upgraded),
        ]
        let rollout = RolloutDescription(id: "abc", file: "app.bin", mode: "confirm-only", versions: ["2.0.0"])
        let change1 = snapshot.apply(.prepared(rollout, earlier))
        #expect(change1)
        #expect(snapshot.rollout == "abc" && snapshot.devices[3].seen == "earlier run")

        let change2 = snapshot.apply(.phase(.wave(0)))
        #expect(change2)
        let change3 = snapshot.apply(.started(Self.record("a", 0, .running)))
        #expect(change3)
        #expect(snapshot.devices[0].status == "running" && snapshot.devices[0].step == "starting")
        let change4 = snapshot.apply(.upgrade(device: "a", .stateChanged(from: .idle, to: .uploading)))
        #expect(change4)
        #expect(snapshot.devices[0].step == "uploading")
        let change5 = snapshot.apply(.upgrade(device: "a", .warning("slow")))
        #expect(!change5)
        // A whole percent more is a change; the same percent again is none.
        for (confirmed, changes) in [(410, true), (425, true), (429, false)] {
            let progress = FirmwareUpgrade.UploadProgress(
                image: 0,
                imageBytesConfirmed: confirmed,
                imageBytes: 1_000,
                totalBytesConfirmed: confirmed,
                totalBytes: 1_000,
                bytesPerSecond: 1_000,
                estimatedTimeRemaining: nil
            )
            #expect(snapshot.apply(.upgrade(device: "a", .uploadProgress(progress))) == changes, "\(confirmed)")
        }
        #expect(snapshot.devices[0].percent == 42)
        snapshot.apply(.ended(Self.record("a", 0, .upgraded)))
        snapshot.apply(.ended(Self.record("b", 1, .failed)))
        #expect(snapshot.devices[1].detail.contains("the device said no"))
        #expect(snapshot.devices[0].step == nil && snapshot.devices[0].versionAfter == "2.0.0")
        #expect(snapshot.waves.value == 1, "half the fleet ended: the first wave")
        #expect(snapshot.budget.value == 1)

        snapshot.apply(.halted(.canaryFailed(device: "b")))
        #expect(snapshot.status == "halting" && snapshot.halt == "the canary b failed")

        let records = [
            Self.record("a", 0, .upgraded), Self.record("b", 1, .failed), Self.record("c", 2, .pending),
            Self.record("d", 3, .upgraded),
        ]
        let outcome = RolloutOutcome(
            records: records,
            halt: .canaryFailed(device: "b"),
            interrupted: false,
            started: ["a", "b"],
            endedBefore: ["d"]
        )
        snapshot.apply(.finished(outcome))
        #expect(snapshot.finished && snapshot.status == "halted")
        #expect(snapshot.devices.map(\.seen) == ["this run", "this run", "not contacted", "earlier run"])
        #expect(snapshot.summary == ["1 pending, 2 upgraded, 1 failed", "this run contacted 2 devices"])
    }

    @Test func theSnapshotEncodesWithoutThePolicy() throws {
        let snapshot = try Self.snapshot()
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let object = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(snapshot)) as? [String: Any]
        )
        #expect(object["policy"] == nil && object["records"] == nil)
        #expect(object["budget"] != nil && object["waves"] != nil && (object["devices"] as? [Any])?.count == 4)
    }

    @Test func theSnapshotEncodesEveryFieldItHolds() throws {
        var snapshot = try Self.snapshot()
        snapshot.apply(.phase(.wave(0)))
        snapshot.apply(.halted(.canaryFailed(device: "b")))
        snapshot.fail("the state is gone")
        let object = try Self.json(snapshot)
        let expected = [
            "id", "revision", "file", "mode", "status", "phase", "waves", "budget", "devices", "halt", "summary",
            "error", "finished",
        ]
        #expect(Set(object.keys) == Set(expected))
    }

    /// A stream's first message is the whole snapshot; later ones carry the rows changed since the
    /// stream's last message, with that message's revision, and everything else but the rows.
    @Test func anUpdateCarriesOnlyTheRowsThatChanged() throws {
        var snapshot = try Self.snapshot()
        let first = try Self.json(FleetSnapshot.Update(snapshot, after: nil))
        #expect((first["devices"] as? [Any])?.count == 4 && first["base"] == nil && first["changed"] == nil)

        let before = snapshot
        snapshot.revision = 7
        snapshot.apply(.started(Self.record("c", 2, .running)))
        snapshot.apply(.upgrade(device: "c", .stateChanged(from: .idle, to: .uploading)))
        let update = FleetSnapshot.Update(snapshot, after: before)
        #expect(update.base == before.revision)
        #expect(update.changed == [.init(index: 2, row: snapshot.devices[2])])
        let message = try Self.json(update)
        #expect(message["devices"] == nil && message["base"] as? Int == before.revision)
        #expect(message["revision"] as? Int == 7 && message["status"] as? String == "running")
        let changed = try #require(message["changed"] as? [[String: Any]])
        #expect(changed.count == 1 && changed[0]["index"] as? Int == 2)
        #expect((changed[0]["row"] as? [String: Any])?["step"] as? String == "uploading")

        // Nothing changed in the rows: the header alone.
        #expect(FleetSnapshot.Update(snapshot, after: snapshot).changed.isEmpty)
        // Another rollout: the whole snapshot again.
        let other = FleetSnapshot(file: "b.bin", mode: "test", policy: RolloutPolicy(), inventory: try Self.inventory())
        #expect(FleetSnapshot.Update(snapshot, after: other).base == nil)
    }

    /// The four devices' rollout of `app.bin`, confirm-only, with the default policy.
    static func snapshot() throws -> FleetSnapshot {
        FleetSnapshot(file: "app.bin", mode: "confirm-only", policy: RolloutPolicy(), inventory: try inventory())
    }

    static func json(_ value: some Encodable) throws -> [String: Any] {
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return try #require(try JSONSerialization.jsonObject(with: encoder.encode(value)) as? [String: Any])
    }
}
