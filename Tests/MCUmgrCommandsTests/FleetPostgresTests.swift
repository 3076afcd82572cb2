import Foundation
import MCUboot
import MCUmgrFleet
import SMPBytes
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
    .requiring(TestPostgres.enabled, "no PostgreSQL: set MCUMGR_TEST_POSTGRES (scripts/postgres-test-server.sh)")
)
struct FleetPostgresTests {
    @Test func threeWorkersShareARolloutAndOneIsKilledMidway() async throws {
        let database = try await TestPostgres.freshDatabase()
        let mcumgr = try EntryTests.executable()
        let scratch = Scratch()
        let stats = scratch.missing("stats.json")
        let imageData = try BLEBenchmark.syntheticImage(size: 64 * 1024)
        let image = try scratch.file("app.bin", imageData)
        // The fleet is the built simulator at the lowest priority, like the workers.
        let simulator = FleetAcceptanceTests.nice(
            mcumgr,
            ["simulator", "--udp", "127.0.0.1:0", "--count", "200", "--latency-ms", "20", "--stats", stats]
        )
        defer { simulator.stop() }
        let served = try await simulator.waitForOutput { out, _ in CLI.lines(out).count == 200 }
        try #require(served, "\(simulator.output.stderr)")
        let urls = CLI.lines(simulator.output.stdout).map { String($0.split(separator: " ")[0]) }
        let inventory = try scratch.file("fleet.txt", Data(simulator.output.stdout.utf8))
        func worker(_ name: String) -> RunningProcess {
            FleetAcceptanceTests.nice(
                mcumgr,
                [
                    "fleet", "upgrade", image, "--inventory", inventory, "--state", database, "--worker", name,
                    "--parallel", "16", "--canary", "2", "--waves", "10%,50%,100%", "--max-failures", "5%",
                    "--lease", "10", "--json",
                ]
            )
        }
        // w2 and w3 join once w1 ended a few devices — as a worker slow to start on a busy machine
        // does: the devices w1 ended before they began are w1's in their tables, not an earlier
        // run's.
        var workers = [worker("w1")]
        defer { for process in workers { process.stop() } }

        // w1 dies once it ended a few devices and one of its own is between 10 % and 70 % of its
        // upload, by its own progress events (or never, if it ends first).
        var victim: String?
        var read = JSONEvents()
        var ended = Set<String>()
        var percents: [String: Int] = [:]
        while victim == nil, !workers[0].hasExited {
            for event in workers[0].readEvents(into: &read) {
                guard let device = event["device"] as? String else { continue }
                if event["event"] as? String == "ended" { ended.insert(device) }
                if event["event"] as? String == "progress" { percents[device] = event["percent"] as? Int }
            }
            if ended.count >= 5 {
                if workers.count == 1 { workers += [worker("w2"), worker("w3")] }
                victim = percents.first { !ended.contains($0.key) && (10...70).contains($0.value) }?.key
            }
            if victim == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        try #require(workers.count == 3, "w1 ended before it ended five devices: \(workers[0].output.stderr)")
        let caught = try #require(victim, "w1 never had a device mid-upload: \(workers[0].output.stderr)")
        workers[0].send(SIGKILL)
        _ = try await workers[0].finished()
        for process in workers.dropFirst() {
            let result = try await process.finished()
            #expect(result.status == 0, "\(result.stderr.suffix(2000))")
            let summary = try #require(try CLI.jsonLines(result.stdout).last)
            #expect((summary["counts"] as? [String: Any])?["upgraded"] as? Int == 200, "\(summary)")
            // Every device was seen in this rollout's run, by this worker or another: none is shown
            // from an earlier run, not even those w1 ended before this worker began.
            let sources = try #require(summary["sources"] as? [String: Int], "\(summary)")
            #expect(sources["this_run", default: 0] + sources["another_worker", default: 0] == 200, "\(sources)")
            #expect(sources["earlier_run"] == 0, "\(sources)")
        }

        // Every device runs the image (its own list says so), and by its own counters no two
        // clients ever talked to it at once, and nobody uploaded to it from scratch twice.
        let snapshot = try await FleetAcceptanceTests.snapshotEntries(simulator, stats)
        #expect(snapshot.count == 200)
        for entry in snapshot {
            let name = entry["name"] as? String ?? "?"
            let spans = (entry["clients"] as? [[String: Any]] ?? []).compactMap { span -> (Double, Double)? in
                guard let first = span["first"] as? Double, let last = span["last"] as? Double else { return nil }
                return (first, last)
            }.sorted { $0.0 < $1.0 }
            for (earlier, later) in zip(spans, spans.dropFirst()) {
                #expect(earlier.1 < later.0, "\(name): two clients at once: \(spans)")
            }
            let counters = entry["counters"] as? [String: Int] ?? [:]
            #expect(counters["uploads_started"] == 1, "\(name) was uploaded to from scratch twice: \(counters)")
        }
        let hash = Hex.encode(try #require(try MCUbootImage(bytes: Array(imageData)).hash))
        for url in urls {
            let list = await CLI.run(["image", "list", "--json", "--conn", url])
            let images = (try? CLI.json(list.stdout))?["images"] as? [[String: Any]] ?? []
            let new = images.first { $0["hash"] as? String == hash }
            #expect(new?["active"] as? Bool == true && new?["confirmed"] as? Bool == true, "\(url): \(list.stdout)")
        }
        let rows = try await TestPostgres.query(
            database,
            "SELECT worker, attempts FROM mcumgr_devices WHERE id = '\(caught)'"
        )
        #expect(rows.first?.first != "w1", "\(caught), caught on w1, is finished by another worker: \(rows)")
        #expect(Int(rows.first?.last ?? "") ?? 0 >= 2, "\(caught) was claimed again: \(rows)")

        // The gates held, by the database's own times: nobody outside the canary started before the
        // canary ended, and no wave's device started before every device of the waves before it ended.
        let ends = RolloutPolicy(waves: [.percent(10), .percent(50), .percent(100)]).waveEnds(of: 200)
        let wave = "CASE WHEN position < \(ends[0]) THEN 0 WHEN position < \(ends[1]) THEN 1 ELSE 2 END"
        let early = try await TestPostgres.query(
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
        let canaries = try await TestPostgres.query(
            database,
            "SELECT count(*) FROM mcumgr_devices WHERE phase = 'canary'"
        )
        #expect(canaries.first?.first == "2")
        simulator.send(SIGINT)
        _ = try await simulator.finished()
    }

    /// A worker stopped (SIGSTOP) mid-upload past its lease: another worker, started while it is
    /// stopped, takes its devices once the lease ran out; resumed, the stopped worker sends
    /// nothing more to them — by the devices' own record of who talked to them when.
    @Test func aWorkerStoppedPastItsLeaseSendsNothingMoreToTheDevicesAnotherTook() async throws {
        let database = try await TestPostgres.freshDatabase()
        let mcumgr = try EntryTests.executable()
        let scratch = Scratch()
        let stats = scratch.missing("stats.json")
        let image = try scratch.file("app.bin", try BLEBenchmark.syntheticImage(size: 256 * 1024))
        let simulator = FleetAcceptanceTests.nice(
            mcumgr,
            [
                "simulator", "--udp", "127.0.0.1:0", "--count", "4", "--latency-ms", "20", "--slot-size", "0x80000",
                "--stats", stats,
            ]
        )
        defer { simulator.stop() }
        let served = try await simulator.waitForOutput { out, _ in CLI.lines(out).count == 4 }
        try #require(served, "\(simulator.output.stderr)")
        let inventory = try scratch.file("fleet.txt", Data(simulator.output.stdout.utf8))
        func worker(_ name: String) -> RunningProcess {
            FleetAcceptanceTests.nice(
                mcumgr,
                [
                    "fleet", "upgrade", image, "--inventory", inventory, "--state", database, "--worker", name,
                    "--parallel", "4", "--lease", "2", "--json",
                ]
            )
        }
        let w1 = worker("w1")
        defer { w1.stop() }
        var victim: String?
        var read = JSONEvents()
        while victim == nil, !w1.hasExited {
            victim =
                w1.readEvents(into: &read).last {
                    guard $0["event"] as? String == "progress", let percent = $0["percent"] as? Int else {
                        return false
                    }
                    return (10...70).contains(percent)
                }?["device"] as? String
            if victim == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let caught = try #require(victim, "w1 never had a device mid-upload: \(w1.output.stderr)")
        w1.send(SIGSTOP)
        let w2 = worker("w2")
        defer { w2.stop() }
        var taken = false
        read = JSONEvents()
        while !taken, !w2.hasExited {
            taken = w2.readEvents(into: &read).contains {
                $0["event"] as? String == "started" && $0["device"] as? String == caught
            }
            if !taken { try await Task.sleep(for: .milliseconds(20)) }
        }
        w1.send(SIGCONT)
        try #require(taken, "w2 never took \(caught): \(w2.output.stderr)")
        for result in [try await w1.finished(), try await w2.finished()] {
            #expect(result.status == 0, "\(result.stderr.suffix(2000)) \(result.stdout.suffix(3000))")
        }
        w2.readEvents(into: &read)
        let summary = try #require(read.objects.last)
        #expect((summary["counts"] as? [String: Any])?["upgraded"] as? Int == 4, "\(summary)")
        for entry in try await FleetAcceptanceTests.snapshotEntries(simulator, stats) {
            let spans = (entry["clients"] as? [[String: Any]] ?? []).compactMap { span -> (Double, Double)? in
                guard let first = span["first"] as? Double, let last = span["last"] as? Double else { return nil }
                return (first, last)
            }.sorted { $0.0 < $1.0 }
            for (earlier, later) in zip(spans, spans.dropFirst()) {
                #expect(earlier.1 < later.0, "\(entry["name"] ?? "?"): two clients at once: \(spans)")
            }
        }
        simulator.send(SIGINT)
        _ = try await simulator.finished()
    }
    /// The database goes away mid-rollout (its server ends every connection to it): the rollout
    /// stops with the store's own status and one line naming the server, not a device's
    /// "failed" and not PostgresNIO's `PSQLError(...)` dump.
    @Test func aDatabaseLostMidRolloutEndsWithOneLineAndTheStatesOwnStatus() async throws {
        let database = try await TestPostgres.freshDatabase()
        let address = try #require(URLComponents(string: database)).host.map { host in
            "\(host):\(URLComponents(string: database)?.port ?? 5432)"
        }
        let mcumgr = try EntryTests.executable()
        let scratch = Scratch()
        let image = try scratch.file("app.bin", try BLEBenchmark.syntheticImage(size: 448 * 1024))
        let simulator = RunningProcess(
            mcumgr,
            ["simulator", "--udp", "127.0.0.1:0", "--count", "2", "--latency-ms", "40", "--slot-size", "0x80000"],
            timeout: .seconds(3_600)
        )
        defer { simulator.stop() }
        let served = try await simulator.waitForOutput { out, _ in CLI.lines(out).count == 2 }
        try #require(served, "\(simulator.output.stderr)")
        let inventory = try scratch.file("fleet.txt", Data(simulator.output.stdout.utf8))
        let worker = RunningProcess(
            mcumgr,
            ["fleet", "upgrade", image, "--inventory", inventory, "--state", database, "--json"],
            timeout: .seconds(3_600)
        )
        defer { worker.stop() }
        var uploading = false
        var read = JSONEvents()
        while !uploading, !worker.hasExited {
            uploading = worker.readEvents(into: &read).contains { $0["event"] as? String == "progress" }
            if !uploading { try await Task.sleep(for: .milliseconds(20)) }
        }
        try #require(uploading, "the rollout never uploaded: \(worker.output.stderr)")
        // The devices hold still while the database goes away, so the rollout cannot end before
        // it has to use the store again: bound by the devices, not by how fast this test runs.
        simulator.send(SIGSTOP)
        defer { simulator.send(SIGCONT) }
        worker.readEvents(into: &read)
        try #require(
            !read.objects.contains { $0["event"] as? String == "summary" },
            "the rollout ended before the database was taken away; the test proves nothing"
        )
        _ = try await TestPostgres.query(
            database,
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                + "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        simulator.send(SIGCONT)
        let result = try await worker.finished()
        #expect(result.status == 4, "\(result.stderr.suffix(2000))")
        let errors = CLI.lines(result.stderr).filter { $0.hasPrefix("error: ") }
        #expect(errors.count == 1, "\(result.stderr.suffix(2000))")
        #expect(errors.first?.contains("PostgreSQL at \(address ?? "?")") == true, "\(errors)")
        #expect(!result.stderr.contains("PSQLError") && !result.stdout.contains("PSQLError"))
        let last = try #require(CLI.lines(result.stdout).last)
        let error = try #require(try CLI.json(last)["error"] as? [String: Any])
        #expect(error["status"] as? Int == 4 && error["kind"] as? String == "state", "\(error)")
        simulator.send(SIGINT)
        _ = try await simulator.finished()
    }

    /// `fleet status` on a database names it without its password (the test server trusts local
    /// connections, so any password gets in): a terminal's scrollback and a CI log keep what is
    /// printed.
    @Test func statusNamesTheDatabaseWithoutItsPassword() async throws {
        var components = try #require(URLComponents(string: try await TestPostgres.freshDatabase()))
        components.password = "s3cret"
        let url = try #require(components.string)
        let result = await CLI.run(["fleet", "status", "--state", url])
        #expect(result.status != 0)
        #expect(result.stderr.contains("holds no rollout yet"), "\(result.stderr)")
        #expect(!result.stderr.contains("s3cret") && !result.stdout.contains("s3cret"), "\(result.stderr)")
    }
}
