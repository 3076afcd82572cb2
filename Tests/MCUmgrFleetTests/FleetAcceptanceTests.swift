import Foundation
import MCUboot
import MCUmgrDFU
import MCUmgrFleet
import SMPSimulator
import Testing

/// The acceptance: 200 simulated devices over UDP (20 ms latency each way, a 256 KiB
/// image, faults on a seeded 10 % of them) in one rollout with a canary, three waves and a
/// failure budget; then the same command again.
@Suite(.serialized) struct FleetAcceptanceTests {
    @Test func twoHundredDevicesInOneRolloutThenASecondRunTouchesNothing() async throws {
        let fleet = try await SimulatedFleet(
            count: 200,
            configuration: FleetHarness.device(),
            faultShare: 0.1,
            seed: 22
        )
        defer { Task { await fleet.stop() } }
        #expect(fleet.members.count { $0.fault != nil } == 20)
        // The canary must be a device that can be upgraded, or the rollout halts by design.
        try #require(fleet.members.prefix(2).allSatisfy { $0.fault == nil }, "the seed keeps the canary healthy")
        let package = try FleetHarness.package(size: 256 * 1024)
        let hash = try #require(package.images.first?.hash)
        let state = FleetHarness.scratch("state.sqlite")
        let policy = RolloutPolicy(
            canary: 2,
            waves: [.percent(10), .percent(50), .percent(100)],
            maxFailures: .percent(10),
            parallel: 48,
            linkRetries: 1,
            backoff: .milliseconds(500)
        )
        let (outcome, events) = try await FleetHarness.run(package, fleet: fleet, policy: policy, state: state)
        #expect(outcome.halt == nil, "\(String(describing: outcome.halt))")
        for member in fleet.members {
            let record = try #require(outcome.records.first { $0.id == member.name })
            switch member.fault {
            case nil, .slow, .powerLoss:
                #expect(record.status == .upgraded, "\(member.name): \(record)")
                #expect(await FleetHarness.runsConfirmed(hash, member.device), "\(member.name) runs the image")
            case .dead:
                #expect(record.status == .unreachable && record.failure != nil, "\(member.name): \(record)")
            case .refusing:
                #expect(record.status == .failed && record.failure?.code == "device rejected", "\(record)")
            }
            #expect(await member.device.stage == .application, "\(member.name) is not bricked")
        }
        // The waves held: no device of a wave started before every device of the waves before it ended.
        var endedAt: [String: Int] = [:]
        var startedAt: [String: Int] = [:]
        for (index, event) in events.enumerated() {
            if case .started(let record) = event { startedAt[record.id] = startedAt[record.id] ?? index }
            if case .ended(let record) = event { endedAt[record.id] = index }
        }
        let ends = policy.waveEnds(of: 200)
        for record in outcome.records where record.phase != .canary {
            let wave = RolloutGates.wave(of: record.position, ends: ends)
            guard wave > 0, let start = startedAt[record.id] else { continue }
            let earlier = outcome.records.filter { RolloutGates.wave(of: $0.position, ends: ends) < wave }
            #expect(
                earlier.allSatisfy { (endedAt[$0.id] ?? .max) < start },
                "\(record.id) started before wave \(wave) was due"
            )
        }

        let before = await fleet.counters()
        let (again, _) = try await FleetHarness.run(package, fleet: fleet, policy: policy, state: state)
        #expect(await fleet.counters() == before, "the second run touched no device")
        #expect(again.records.map(\.status) == outcome.records.map(\.status))
    }
}
