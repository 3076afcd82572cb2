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
        #expect(change1 == .change)
        #expect(snapshot.rollout == "abc" && snapshot.devices[3].seen == "earlier run")

        let change2 = snapshot.apply(.phase(.wave(0)))
        #expect(change2 == .change)
        let change3 = snapshot.apply(.started(Self.record("a", 0, .running)))
        #expect(change3 == .change)
        #expect(snapshot.devices[0].status == "running" && snapshot.devices[0].step == "starting")
        let change4 = snapshot.apply(.upgrade(device: "a", .stateChanged(from: .idle, to: .uploading)))
        #expect(change4 == .change)
        #expect(snapshot.devices[0].step == "uploading")
        let change5 = snapshot.apply(.upgrade(device: "a", .warning("slow")))
        #expect(change5 == .nothing)
        _ = snapshot.apply(.ended(Self.record("a", 0, .upgraded)))
        _ = snapshot.apply(.ended(Self.record("b", 1, .failed)))
        #expect(snapshot.devices[1].detail.contains("the device said no"))
        #expect(snapshot.devices[0].step == nil && snapshot.devices[0].versionAfter == "2.0.0")
        #expect(snapshot.waves.value == 1, "half the fleet ended: the first wave")
        #expect(snapshot.budget.value == 1)

        _ = snapshot.apply(.halted(.canaryFailed(device: "b")))
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
        _ = snapshot.apply(.finished(outcome))
        #expect(snapshot.finished && snapshot.status == "halted")
        #expect(snapshot.devices.map(\.seen) == ["this run", "this run", "not contacted", "earlier run"])
        #expect(snapshot.summary == ["1 pending, 2 upgraded, 1 failed", "this run contacted 2 devices"])
    }

    @Test func theSnapshotEncodesWithoutThePolicy() throws {
        let snapshot = FleetSnapshot(
            file: "app.bin",
            mode: "confirm-only",
            policy: RolloutPolicy(),
            inventory: try Self.inventory()
        )
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let object = try #require(
            try JSONSerialization.jsonObject(with: encoder.encode(snapshot)) as? [String: Any]
        )
        #expect(object["policy"] == nil && object["records"] == nil)
        #expect(object["budget"] != nil && object["waves"] != nil && (object["devices"] as? [Any])?.count == 4)
    }
}
