import Foundation
import MCUboot
import MCUmgrConnect
import MCUmgrDFU
import MCUmgrFleet
import SMPCore
import SMPLink
import SMPSimulator
import SMPTestSupport
import Testing

/// Rollouts against simulated fleets over real UDP sockets, in this process. Bounded by events
/// (the rollout's end), never by wall-clock timings.
@Suite(.serialized) struct FleetUpgradeTests {
    /// Every fault kind once among eight devices: healthy, slow and power-loss devices end
    /// upgraded (their own image lists say so), the dead one unreachable, the refusing one failed
    /// with the device's refusal; the second run of the same command touches no device.
    @Test func everyFaultEndsAsItShouldAndASecondRunTouchesNothing() async throws {
        let fleet = try await SimulatedFleet(
            count: 8,
            configuration: FleetHarness.device(latency: .milliseconds(5)),
            faultShare: 0.5,
            seed: 3
        )
        defer { Task { await fleet.stop() } }
        let kinds = fleet.members.compactMap(\.fault)
        try #require(Set(kinds) == Set(SimulatedFleet.FaultKind.allCases), "the draw gives every kind: \(kinds)")
        let package = try FleetHarness.package(size: 24 * 1024)
        let hash = try #require(package.images.first?.hash)
        let state = FleetHarness.scratch("state.sqlite")
        let policy = RolloutPolicy(maxFailures: .count(2), parallel: 8, linkRetries: 1, backoff: .milliseconds(200))
        let (outcome, events) = try await FleetHarness.run(package, fleet: fleet, policy: policy, state: state)
        for member in fleet.members {
            let record = try #require(outcome.records.first { $0.id == member.name })
            switch member.fault {
            case nil, .slow, .powerLoss:
                #expect(record.status == .upgraded, "\(member.name) \(String(describing: member.fault)): \(record)")
                #expect(await FleetHarness.runsConfirmed(hash, member.device), "\(member.name)")
                #expect(record.versionBefore == "1.0.0" && record.versionAfter == "2.0.0")
            case .dead:
                #expect(record.status == .unreachable, "\(record)")
                #expect(record.attempts == 2 && record.failure?.code == .linkFailed, "\(record)")
            case .refusing:
                #expect(record.status == .failed, "\(record)")
                #expect(record.attempts == 1 && record.failure?.code == .deviceRejected, "\(record)")
            }
            #expect(await member.device.stage == .application, "\(member.name) is left bootable")
        }
        let ended = events.compactMap { if case .ended(let record) = $0 { record.id } else { nil } }
        #expect(ended.sorted() == fleet.members.map(\.name).sorted(), "one ended event per device")
        #expect(outcome.halt == nil && !outcome.isSuccess)

        let before = await fleet.counters()
        let (again, _) = try await FleetHarness.run(package, fleet: fleet, policy: policy, state: state)
        #expect(await fleet.counters() == before, "the second run sent nothing to any device")
        #expect(again.records.map(\.status) == outcome.records.map(\.status))

        // With retryFailed, the failed and unreachable devices, and only they, are tried again.
        let (retried, _) = try await FleetHarness.run(
            package,
            fleet: fleet,
            policy: policy,
            state: state,
            retryFailed: true
        )
        let after = await fleet.counters()
        for (index, member) in fleet.members.enumerated() {
            let touched = after[index].counters.requests != before[index].counters.requests
            #expect(touched == (member.fault == .refusing), "\(member.name) \(String(describing: member.fault))")
        }
        let dead = try #require(retried.records.first { $0.id == fleet.members.first { $0.fault == .dead }?.name })
        #expect(dead.status == .unreachable && dead.attempts == 4, "\(dead)")
    }

    /// Two simulated racks name their devices alike (`sim-001` …). A rollout of rack B in the
    /// state that holds rack A's finished rollout of the same image must reach rack B's devices:
    /// a record is the device at its URL, not a name.
    @Test func aSecondInventoryWithTheSameNamesIsUpgradedNotShownFromTheFirst() async throws {
        let rackA = try await SimulatedFleet(count: 3, configuration: FleetHarness.device(latency: .zero))
        defer { Task { await rackA.stop() } }
        let rackB = try await SimulatedFleet(count: 3, configuration: FleetHarness.device(latency: .zero))
        defer { Task { await rackB.stop() } }
        #expect(rackA.members.map(\.name) == rackB.members.map(\.name))
        let package = try FleetHarness.package(size: 8 * 1024)
        let hash = try #require(package.images.first?.hash)
        let state = FleetHarness.scratch("state.sqlite")
        let first = try await FleetHarness.run(package, fleet: rackA, policy: RolloutPolicy(), state: state).outcome
        #expect(first.records.map(\.status) == [.upgraded, .upgraded, .upgraded])

        let second = try await FleetHarness.run(package, fleet: rackB, policy: RolloutPolicy(), state: state).outcome
        #expect(second.records.map(\.status) == [.upgraded, .upgraded, .upgraded])
        #expect(second.records.map(\.url) == rackB.members.map(\.url))
        #expect(second.records.map(\.versionBefore) == ["1.0.0", "1.0.0", "1.0.0"])
        for member in rackB.members {
            #expect(await FleetHarness.runsConfirmed(hash, member.device), "\(member.name) of rack B runs the image")
            #expect(await member.device.counters.uploadsStarted == 1, "\(member.name) of rack B was uploaded to")
        }
    }

    /// A device that already runs the image is not uploaded to, nor reset.
    @Test func alreadyCurrentDevicesGetNoUpload() async throws {
        let fleet = try await SimulatedFleet(count: 3, configuration: FleetHarness.device(latency: .zero))
        defer { Task { await fleet.stop() } }
        let package = try FleetHarness.package(size: 8 * 1024)
        let state = FleetHarness.scratch("state.sqlite")
        let first = try await FleetHarness.run(package, fleet: fleet, policy: RolloutPolicy(), state: state).outcome
        #expect(first.records.map(\.status) == [.upgraded, .upgraded, .upgraded])
        // A new state file: the devices already run the image.
        let fresh = FleetHarness.scratch("state.sqlite")
        let before = await fleet.counters()
        let second = try await FleetHarness.run(package, fleet: fleet, policy: RolloutPolicy(), state: fresh).outcome
        #expect(second.records.map(\.status) == [.alreadyCurrent, .alreadyCurrent, .alreadyCurrent])
        let after = await fleet.counters()
        #expect(zip(before, after).allSatisfy { $0.counters.uploadsStarted == $1.counters.uploadsStarted })
        #expect(zip(before, after).allSatisfy { $0.counters.imageBytesReceived == $1.counters.imageBytesReceived })
        #expect(zip(before, after).allSatisfy { $0.counters.resets == $1.counters.resets })
    }

    /// A canary that the device refuses halts the rollout: nobody else is started.
    @Test func aRefusedCanaryHaltsTheRollout() async throws {
        let fleet = try await SimulatedFleet(count: 4, configuration: FleetHarness.device(latency: .zero))
        defer { Task { await fleet.stop() } }
        await fleet.members[0].device.inject(.refuseUploads(returnCode: 10))
        let package = try FleetHarness.package(size: 8 * 1024)
        let state = FleetHarness.scratch("state.sqlite")
        let outcome = try await FleetHarness.run(package, fleet: fleet, policy: RolloutPolicy(canary: 1), state: state)
            .outcome
        #expect(outcome.records.map(\.status) == [.failed, .skipped, .skipped, .skipped])
        #expect(outcome.halt == .canaryFailed(device: "sim-001"))
        for member in fleet.members.dropFirst() { #expect(await member.device.counters.requests == 0) }
    }

    /// A transport whose device never answers a connection (nothing at the address).
    struct RefusingTransport: SMPTransport {
        var endpointDescription: String { "udp://192.0.2.1:1337" }
        func connect() async throws -> any SMPConnection {
            throw SMPTransportError(.connectionFailed, "connection refused")
        }
    }

    /// A retry's back-off waits on the rollout's clock, not the machine's: an hour of it passes
    /// when the test advances the clock, and the records are dated by it.
    @Test func aRetryWaitsItsBackOffOnTheRolloutsClock() async throws {
        let clock = ManualClock()
        let origin = Date(timeIntervalSince1970: 3_000_000)
        var upgrade = FleetUpgrade(
            policy: RolloutPolicy(linkRetries: 1, backoff: .seconds(3_600), maximumBackoff: .seconds(3_600)),
            configuration: FirmwareUpgrade.Configuration(mode: .confirmOnly),
            clientConfiguration: FleetHarness.client,
            worker: "test-host",
            makeTransport: { _ in RefusingTransport() }
        )
        upgrade.clock = FleetClock(clock, origin: origin)
        let store = try await SQLiteRolloutStore(path: FleetHarness.scratch("state.sqlite"))
        let package = try FleetHarness.package(size: 8 * 1024)
        let inventory = try Inventory(parsing: "udp://192.0.2.1:1337 dev-1\n")
        var starts: [Date] = []
        var outcome: RolloutOutcome?
        for try await event in upgrade.run(package, file: "app.bin", inventory: inventory, store: store) {
            switch event {
            case .started(let record):
                starts.append(try #require(record.startedAt))
            case .retrying(_, let at):
                #expect(at == origin.addingTimeInterval(3_600))
                #expect(starts.count == 1, "the retry started before its back-off passed")
                clock.advance(by: .seconds(3_600))
            case .finished(let ended):
                outcome = ended
            default:
                break
            }
        }
        await store.close()
        #expect(starts == [origin, origin.addingTimeInterval(3_600)])
        let record = try #require(outcome?.records.first)
        #expect(record.status == .unreachable && record.attempts == 2)
        #expect(record.endedAt == origin.addingTimeInterval(3_600))
    }

    /// What a device ran is in the state before its first chunk goes out, however slow the
    /// store's write: a kill during the upload leaves it recorded. (Written from the run's events
    /// it came after the upload had started, and a busy pass of the suite lost it to a kill.)
    @Test func whatADeviceRanIsStoredBeforeItsUploadStarts() async throws {
        let fleet = try await SimulatedFleet(count: 3, configuration: FleetHarness.device(latency: .milliseconds(5)))
        defer { Task { await fleet.stop() } }
        let store = SlowVersionStore(inner: try await SQLiteRolloutStore(path: FleetHarness.scratch("state.sqlite")))
        let seen = SeenAtFirstChunk()
        let upgrade = FleetUpgrade(
            policy: RolloutPolicy(parallel: 3),
            configuration: FirmwareUpgrade.Configuration(mode: .confirmOnly),
            clientConfiguration: FleetHarness.client,
            worker: "test-host",
            makeTransport: { device in
                HookedTransport(try device.url.makeTransport()) { moment in
                    guard case .send(let frame) = moment, frame.header.group == .image, frame.header.command == 1
                    else { return }
                    let records = try? await store.rollout(nil)?.1
                    await seen.note(device.id, records?.first { $0.id == device.id }?.versionBefore)
                }
            }
        )
        let inventory = try Inventory(parsing: fleet.inventory)
        var outcome: RolloutOutcome?
        for try await event in upgrade.run(
            try FleetHarness.package(size: 8 * 1024),
            file: "app.bin",
            inventory: inventory,
            store: store
        ) {
            if case .finished(let ended) = event { outcome = ended }
        }
        await store.close()
        #expect(try #require(outcome).records.map(\.status) == [.upgraded, .upgraded, .upgraded])
        let firstChunks = await seen.first
        #expect(firstChunks.count == 3 && firstChunks.values.allSatisfy { $0 == "1.0.0" }, "\(firstChunks)")
    }
}

/// The state's version of each device as its first upload chunk went out.
private actor SeenAtFirstChunk {
    var first: [String: String?] = [:]
    func note(_ device: String, _ version: String?) {
        if first[device] == nil { first[device] = .some(version) }
    }
}

/// A SQLite store whose writes of what a device ran take a while (a busy disk, a distant
/// database): the rollout must not upload meanwhile.
private struct SlowVersionStore: RolloutStore {
    let inner: SQLiteRolloutStore

    func prepare(_ rollout: RolloutDescription, devices: [Inventory.Device], retryFailed: Bool) async throws
        -> [DeviceRecord]
    { try await inner.prepare(rollout, devices: devices, retryFailed: retryFailed) }

    func save(_ records: [DeviceRecord], rollout: String) async throws {
        try await inner.save(records, rollout: rollout)
    }

    func rollout(_ id: String?) async throws -> (RolloutDescription, [DeviceRecord])? { try await inner.rollout(id) }

    func rollouts() async throws -> [RolloutListing] { try await inner.rollouts() }

    func versionRead(_ rollout: String, device: String, attempt: Int, worker: String, version: String) async throws {
        // Longer than the slot information's round trip and the first chunk's (5 ms each): a
        // rollout that did not wait would send the chunk meanwhile. Nothing here waits *for* it.
        try await Task.sleep(for: .milliseconds(200))
        try await inner.versionRead(rollout, device: device, attempt: attempt, worker: worker, version: version)
    }

    func close() async { await inner.close() }
}
