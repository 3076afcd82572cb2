import Foundation
import MCUboot
import MCUmgrFleet
import SMPCore
import SMPSimulator
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Three `mcumgr fleet` processes share one rollout of 200 simulated devices through a private
/// PostgreSQL server; one is killed with SIGKILL mid-way. Bounded by events (what the workers
/// print, what the devices count), never by durations.
@Suite(
    .serialized,
    .enabled(if: TestPostgres.enabled, "no PostgreSQL: set MCUMGR_TEST_POSTGRES (scripts/postgres-test-server.sh)")
)
struct FleetPostgresTests {
    @Test func threeWorkersShareARolloutAndOneIsKilledMidway() async throws {
        let database = try TestPostgres.freshDatabase()
        let mcumgr = try EntryTests.executable()
        var configuration = SimulatedDevice.Configuration.udp
        configuration.linkLatency = .milliseconds(20)
        let fleet = try await SimulatedFleet(count: 200, configuration: configuration)
        defer { Task { await fleet.stop() } }
        let scratch = Scratch()
        let size = 64 * 1024
        let imageData = try BLEBenchmark.syntheticImage(size: size)
        let image = try scratch.file("app.bin", imageData)
        let inventory = try scratch.file("fleet.txt", Data(fleet.inventory.utf8))
        func worker(_ name: String) -> RunningProcess {
            // At the lowest priority: the workers must not starve the suite's timing tests.
            RunningProcess(
                "/usr/bin/nice",
                [
                    "-n", "19", mcumgr, "fleet", "upgrade", image, "--inventory", inventory, "--state", database,
                    "--worker", name,
                    "--parallel", "16", "--canary", "2", "--waves", "10%,50%,100%", "--max-failures", "5%",
                    "--lease", "10", "--json",
                ],
                timeout: .seconds(900)
            )
        }
        let workers = [worker("w1"), worker("w2"), worker("w3")]
        defer { for process in workers { process.stop() } }

        // w1 dies once it ended a few devices and one of its own is between 10 % and 70 % uploaded.
        var victim: String?
        for _ in 0..<60_000 where victim == nil {
            let events = (try? CLI.jsonLines(workers[0].output.stdout)) ?? []
            let started = Set(
                events.filter { $0["event"] as? String == "started" }.compactMap { $0["device"] as? String }
            )
            let ended = Set(events.filter { $0["event"] as? String == "ended" }.compactMap { $0["device"] as? String })
            if ended.count >= 5 {
                victim = await fleet.counters().first {
                    started.subtracting(ended).contains($0.name)
                        && (size / 10..<size * 7 / 10).contains($0.counters.imageBytesReceived)
                }?.name
            }
            if victim == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let caught = try #require(victim, "w1 never had a device mid-upload: \(workers[0].output.stderr)")
        workers[0].send(SIGKILL)
        _ = try await workers[0].finished()
        for process in workers.dropFirst() {
            let result = try await process.finished()
            #expect(result.status == 0, "\(result.stderr.suffix(2000))")
            let summary = try #require(try CLI.jsonLines(result.stdout).last)
            #expect((summary["counts"] as? [String: Any])?["upgraded"] as? Int == 200, "\(summary)")
        }

        // Every device runs the image, and no two clients ever talked to one device at once.
        let hash = try #require(try MCUbootImage(bytes: Array(imageData)).hash)
        for member in fleet.members {
            let states = await member.device.imageStates
            #expect(states.contains { $0.hash == Data(hash) && $0.isActive && $0.isConfirmed }, "\(member.name)")
            let spans = member.server.clients
            for (earlier, later) in zip(spans, spans.dropFirst()) {
                #expect(
                    earlier.last < later.first,
                    "\(member.name): \(earlier.address) and \(later.address) overlapped"
                )
            }
            #expect(
                await member.device.counters.uploadsStarted == 1,
                "\(member.name) was uploaded to from scratch twice"
            )
        }
        let rows = try TestPostgres.query(
            database,
            "SELECT worker, attempts FROM mcumgr_devices WHERE id = '\(caught)'"
        )
        #expect(rows.first?.first != "w1", "\(caught), caught on w1, is finished by another worker: \(rows)")
        #expect(Int(rows.first?.last ?? "") ?? 0 >= 2, "\(caught) was claimed again: \(rows)")

        // The gates held, by the database's own times: nobody outside the canary started before the
        // canary ended, and no wave's device started before every device of the waves before it ended.
        let ends = RolloutPolicy(waves: [.percent(10), .percent(50), .percent(100)]).waveEnds(of: 200)
        let wave = "CASE WHEN position < \(ends[0]) THEN 0 WHEN position < \(ends[1]) THEN 1 ELSE 2 END"
        let early = try TestPostgres.query(
            database,
            """
            SELECT d.id FROM mcumgr_devices d WHERE
              (d.phase <> 'canary' AND d.first_started_at < (SELECT max(ended_at) FROM mcumgr_devices WHERE phase = 'canary'))
              OR d.first_started_at < (SELECT max(e.ended_at) FROM mcumgr_devices e
                                        WHERE (\(wave.replacingOccurrences(of: "position", with: "e.position")))
                                            < (\(wave.replacingOccurrences(of: "position", with: "d.position"))))
            """
        )
        #expect(early.isEmpty, "started before their gate opened: \(early)")
        let canaries = try TestPostgres.query(database, "SELECT count(*) FROM mcumgr_devices WHERE phase = 'canary'")
        #expect(canaries.first?.first == "2")
    }
}
