import Foundation
import MCUboot
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

/// `mcumgr fleet` and `mcumgr simulator --count`, in-process and as real processes.
@Suite(.serialized) struct FleetCommandTests {
    static func fleetFiles(_ scratch: Scratch, inventory: String) throws -> (
        image: String, inventory: String, state: String
    ) {
        let image = try scratch.file("app.bin", try BLEBenchmark.syntheticImage(size: 8 * 1024))
        return (image, try scratch.file("fleet.txt", Data(inventory.utf8)), scratch.missing("state.sqlite"))
    }

    @Test func upgradesAnInventoryPrintsATableAndStatusReadsItBack() async throws {
        let fleet = try await SimulatedFleet(count: 3)
        defer { Task { await fleet.stop() } }
        let scratch = Scratch()
        let files = try Self.fleetFiles(scratch, inventory: fleet.inventory)
        let result = await CLI.run([
            "fleet", "upgrade", files.image, "--inventory", files.inventory, "--state", files.state,
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = CLI.lines(result.stdout)
        #expect(lines.first?.hasPrefix("DEVICE") == true, "\(result.stdout)")
        #expect(lines.filter { $0.contains(" upgraded ") && $0.contains("1.0.0→2.0.0") }.count == 3, "\(result.stdout)")
        #expect(lines.suffix(2) == ["3 upgraded", "this run contacted 3 devices"], "\(result.stdout)")
        #expect(
            CLI.lines(result.stderr).contains { $0.hasPrefix("sim-001: upgraded 1.0.0 → 2.0.0") },
            "\(result.stderr)"
        )

        let status = await CLI.run(["fleet", "status", "--state", files.state, "--json"])
        #expect(status.status == 0, "\(status.stderr)")
        let json = try CLI.json(status.stdout)
        let devices = try #require(json["devices"] as? [[String: Any]])
        #expect(devices.map { $0["status"] as? String } == ["upgraded", "upgraded", "upgraded"])
        #expect((json["counts"] as? [String: Any])?["upgraded"] as? Int == 3)

        // The state's rollouts: this one, with its devices' counts.
        let list = await CLI.run(["fleet", "status", "--state", files.state, "--list"])
        #expect(list.status == 0, "\(list.stderr)")
        let listed = CLI.lines(list.stdout)
        let id = try #require(json["rollout"] as? String)
        #expect(listed.first?.hasPrefix("ROLLOUT") == true && listed.count == 2, "\(list.stdout)")
        #expect(listed.last?.hasPrefix("\(id)  app.bin  confirm-only  2.0.0  ") == true, "\(list.stdout)")
        #expect(listed.last?.hasSuffix("  3 upgraded") == true, "\(list.stdout)")
        let listJSON = try CLI.json(
            await CLI.run(["fleet", "status", "--state", files.state, "--list", "--json"]).stdout
        )
        let rollouts = try #require(listJSON["rollouts"] as? [[String: Any]])
        #expect(rollouts.map { $0["id"] as? String } == [id])
        #expect((rollouts.first?["counts"] as? [String: Any])?["upgraded"] as? Int == 3)
        let both = await CLI.run(["fleet", "status", "--state", files.state, "--list", "--rollout", id])
        #expect(
            both.status == 64 && both.stderr.contains("--list shows every rollout; drop --rollout"),
            "\(both.stderr)"
        )
    }

    /// The reviewer's two racks: `mcumgr simulator --count 3` twice (the same names `sim-001` …),
    /// each inventory rolled out with the same image and the same state file. The second run must
    /// reach rack B's devices, not show rack A's records as theirs: rack A's records are of other
    /// URLs, so rack B's devices are planned afresh, said in one line each. A third run contacts
    /// nobody and its table and last line say that what it shows is from the earlier run.
    @Test func aSecondRackWithTheSameNamesIsUpgradedNotShownFromTheFirst() async throws {
        let rackA = try await SimulatedFleet(count: 3)
        defer { Task { await rackA.stop() } }
        let rackB = try await SimulatedFleet(count: 3)
        defer { Task { await rackB.stop() } }
        let scratch = Scratch()
        let files = try Self.fleetFiles(scratch, inventory: rackA.inventory)
        let inventoryB = try scratch.file("rackB.txt", Data(rackB.inventory.utf8))
        let hash = try #require(
            try FirmwarePackage(data: Data(contentsOf: URL(fileURLWithPath: files.image)), fileName: "app.bin")
                .images.first?.hash
        )
        let first = await CLI.run([
            "fleet", "upgrade", files.image, "--inventory", files.inventory, "--state", files.state,
        ])
        #expect(first.status == 0, "\(first.stderr)")
        let endedA = try Self.endedTimes(await CLI.run(["fleet", "status", "--state", files.state, "--json"]))

        let second = await CLI.run(["fleet", "upgrade", files.image, "--inventory", inventoryB, "--state", files.state])
        #expect(second.status == 0, "\(second.stderr)")
        for member in rackB.members {
            let runs = await member.device.imageStates.contains {
                $0.hash == Data(hash) && $0.isActive && $0.isConfirmed
            }
            #expect(runs, "\(member.name) of rack B runs the image: \(second.stdout)")
            #expect(await member.device.counters.uploadsStarted == 1, "\(member.name) of rack B was uploaded to")
        }
        let replanned = zip(rackA.members, rackB.members).enumerated().map { index, pair in
            "» \(pair.1.name): recorded at \(pair.0.url) (upgraded, \(endedA[index])), this inventory has \(pair.1.url): "
                + "another device, planned afresh"
        }
        #expect(CLI.lines(second.stderr).filter { $0.hasSuffix("planned afresh") } == replanned, "\(second.stderr)")
        #expect(
            CLI.lines(second.stdout) == [
                "DEVICE   STATUS           VERSION           TRIES  SEEN      DETAIL",
                "sim-001  upgraded         1.0.0→2.0.0       1      this run",
                "sim-002  upgraded         1.0.0→2.0.0       1      this run",
                "sim-003  upgraded         1.0.0→2.0.0       1      this run",
                "3 upgraded",
                "this run contacted 3 devices",
            ]
        )

        let before = await rackB.counters()
        let third = await CLI.run(["fleet", "upgrade", files.image, "--inventory", inventoryB, "--state", files.state])
        #expect(third.status == 0, "the rollout is complete: \(third.stderr)")
        #expect(await rackB.counters() == before, "the third run sent nothing to any device")
        let endedB = try Self.endedTimes(await CLI.run(["fleet", "status", "--state", files.state, "--json"]))
        #expect(
            CLI.lines(third.stdout) == [
                "DEVICE   STATUS           VERSION           TRIES  SEEN                DETAIL",
                "sim-001  upgraded         1.0.0→2.0.0       1      earlier run, \(endedB[0])",
                "sim-002  upgraded         1.0.0→2.0.0       1      earlier run, \(endedB[1])",
                "sim-003  upgraded         1.0.0→2.0.0       1      earlier run, \(endedB[2])",
                "3 upgraded",
                "this run contacted no device; 3 shown from an earlier run",
            ]
        )
        let json = await CLI.run([
            "fleet", "upgrade", files.image, "--inventory", inventoryB, "--state", files.state, "--json",
        ])
        #expect(json.status == 0, "\(json.stderr)")
        let summary = try #require(try CLI.jsonLines(json.stdout).last)
        #expect(summary["contacted"] as? Int == 0, "\(json.stdout)")
        let devices = try #require(summary["devices"] as? [[String: Any]])
        #expect(devices.map { $0["source"] as? String } == ["earlier_run", "earlier_run", "earlier_run"])
        #expect(devices.map { $0["url"] as? String } == rackB.members.map(\.url))
    }

    /// Each device's end time from `fleet status --json`, as the final table writes it.
    static func endedTimes(_ status: CLI.Result) throws -> [String] {
        let devices = try #require(try CLI.json(status.stdout)["devices"] as? [[String: Any]], "\(status.stderr)")
        return try devices.map { device in
            let text = try #require(device["ended_at"] as? String, "\(device)")
            return FleetProgressView.clock(try #require(ISO8601DateFormatter().date(from: text), "\(text)"))
        }
    }

    @Test func jsonIsOneObjectPerDeviceEventThenASummaryAndAFailureExitsThree() async throws {
        let fleet = try await SimulatedFleet(count: 2)
        defer { Task { await fleet.stop() } }
        await fleet.members[1].device.inject(.refuseUploads(returnCode: 10))
        let scratch = Scratch()
        let files = try Self.fleetFiles(scratch, inventory: fleet.inventory)
        let result = await CLI.run([
            "fleet", "upgrade", files.image, "--inventory", files.inventory, "--state", files.state, "--json",
        ])
        #expect(result.status == 3, "\(result.stderr)")
        let objects = try CLI.jsonLines(result.stdout)
        let ended = objects.filter { $0["event"] as? String == "ended" }
        #expect(ended.map { $0["device"] as? String }.sorted { ($0 ?? "") < ($1 ?? "") } == ["sim-001", "sim-002"])
        let refused = try #require(ended.first { $0["device"] as? String == "sim-002" })
        #expect(refused["status"] as? String == "failed")
        #expect((refused["error"] as? [String: Any])?["code"] as? String == "device_rejected")
        let summary = try #require(objects.dropLast().last)
        #expect(summary["event"] as? String == "summary", "\(result.stdout)")
        #expect(((summary["counts"] as? [String: Any])?["failed"] as? Int) == 1)
        #expect((objects.last?["error"] as? [String: Any])?["status"] as? Int == 3)
        CLI.expectOneErrorLine(result)
    }

    @Test(arguments: [
        (["fleet", "upgrade", "x.bin"], Int32(64), "--inventory"),
        (["fleet", "upgrade", "x.bin", "--conn", "udp://a", "--waves", "50%,10%"], 64, "must grow"),
        (["fleet", "upgrade", "x.bin", "--conn", "udp://a", "--max-failures", "ten"], 64, "not a number"),
        (["fleet", "upgrade", "x.bin", "--conn", "udp://a", "--parallel", "0"], 64, "--parallel"),
        (["fleet", "upgrade", "/nonexistent/x.bin", "--conn", "udp://a"], 66, "x.bin"),
    ])
    func refusesBadCommandLines(arguments: [String], status: Int32, fragment: String) async {
        let result = await CLI.run(arguments)
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(fragment), "\(result.stderr)")
        CLI.expectOneErrorLine(result)
    }

    @Test func aBadInventoryLineIsNamedWithStatus65() async throws {
        let scratch = Scratch()
        let files = try Self.fleetFiles(scratch, inventory: "udp://127.0.0.1:1 a\nudp://fe80::1]:5 b\n")
        let result = await CLI.run([
            "fleet", "upgrade", files.image, "--inventory", files.inventory, "--state", files.state,
        ])
        #expect(result.status == 65, "\(result.stderr)")
        #expect(result.stderr.contains("fleet.txt: line 2: "), "\(result.stderr)")
        CLI.expectOneErrorLine(result)
    }

    @Test func statusWithoutStateSaysSo() async {
        let result = await CLI.run(["fleet", "status", "--state", "/nonexistent/state.sqlite"])
        #expect(result.status == 66, "\(result.stderr)")
        CLI.expectOneErrorLine(result)
    }

    /// `mcumgr simulator --count` prints an inventory; `--stats` at exit says what each device
    /// received — here, what a fleet upgrade of those devices sent.
    @Test func theSimulatedFleetPrintsAnInventoryAndItsCountersAtExit() async throws {
        let mcumgr = try EntryTests.executable()
        let scratch = Scratch()
        let stats = scratch.missing("stats.json")
        let simulator = RunningProcess(
            mcumgr,
            [
                "simulator", "--udp", "127.0.0.1:0", "--count", "4", "--fault-share", "25%", "--fault-seed", "5",
                "--stats", stats,
            ],
            timeout: EntryTests.processBound
        )
        defer { simulator.stop() }
        let announced = try await simulator.waitForOutput(timeout: EntryTests.outputBound) { out, _ in
            CLI.lines(out).count == 4
        }
        try #require(announced, "\(simulator.output)")
        let inventory = simulator.output.stdout
        #expect(CLI.lines(inventory).allSatisfy { $0.hasPrefix("udp://127.0.0.1:") }, "\(inventory)")
        #expect(CLI.lines(inventory).filter { $0.contains(" fault=") }.count == 1, "\(inventory)")
        let files = try Self.fleetFiles(scratch, inventory: inventory)
        let upgrade = RunningProcess(
            mcumgr,
            [
                "fleet", "upgrade", files.image, "--inventory", files.inventory, "--state", files.state, "--timeout",
                "1",
                "--retries", "1", "--link-retries", "0",
            ],
            timeout: EntryTests.processBound
        )
        let ended = try await upgrade.finished()
        #expect(ended.status == 0 || ended.status == 3, "\(ended.stderr)")
        simulator.send(SIGINT)
        let served = try await simulator.finished()
        #expect(served.status == 0, "\(served.stderr)")
        let data = try Data(contentsOf: URL(fileURLWithPath: stats))
        let entries = try #require(try JSONSerialization.jsonObject(with: data) as? [[String: Any]])
        #expect(entries.count == 4)
        for entry in entries {
            let counters = try #require(entry["counters"] as? [String: Any])
            let name = entry["name"] as? String ?? "?"
            let status = CLI.lines(ended.stdout).first { $0.hasPrefix(name + " ") } ?? ""
            if status.contains(" upgraded ") {
                #expect(counters["uploads_started"] as? Int ?? 0 >= 1, "\(entry)")
                #expect(counters["image_bytes_received"] as? Int ?? 0 >= 8 * 1024 - 64, "\(entry)")
                #expect(counters["resets"] as? Int == 1, "\(entry)")
            }
        }
    }

    /// Ctrl-C mid-rollout: nothing new starts, the upgrades in flight are cancelled as a single
    /// upgrade is, status 130 with one line saying how to resume, the table shows the devices
    /// left pending; the same command then finishes, uploading nobody from scratch twice.
    @Test func ctrlCStopsTheRolloutCleanlyAndTheSameCommandFinishesIt() async throws {
        let mcumgr = try EntryTests.executable()
        var configuration = SimulatedDevice.Configuration.udp
        configuration.linkLatency = .milliseconds(20)
        let fleet = try await SimulatedFleet(count: 12, configuration: configuration)
        defer { Task { await fleet.stop() } }
        let scratch = Scratch()
        let size = 128 * 1024
        let image = try scratch.file("app.bin", try BLEBenchmark.syntheticImage(size: size))
        let inventory = try scratch.file("fleet.txt", Data(fleet.inventory.utf8))
        let command = [
            "fleet", "upgrade", image, "--inventory", inventory, "--state", scratch.missing("s.sqlite"), "--parallel",
            "3",
        ]
        let first = FleetAcceptanceTests.nice(mcumgr, command)
        defer { first.stop() }
        var uploading = false
        while !uploading, !first.hasExited {
            let ended = CLI.lines(first.output.stderr).filter { $0.contains(": upgraded ") }.count
            let counters = await fleet.counters()
            uploading =
                ended >= 2 && counters.contains { (size / 10..<size * 7 / 10).contains($0.counters.imageBytesReceived) }
            if !uploading { try await Task.sleep(for: .milliseconds(10)) }
        }
        try #require(uploading, "\(first.output)")
        first.send(SIGINT)
        let interrupted = try await first.finished()
        #expect(interrupted.status == 130, "\(interrupted.stderr)")
        let last = try #require(CLI.lines(interrupted.stderr).last)
        #expect(
            last.hasPrefix("error: interrupted; ") && last.hasSuffix("run the same command again to resume"),
            "\(last)"
        )
        #expect(CLI.lines(interrupted.stdout).contains { $0.contains(" pending ") }, "\(interrupted.stdout)")
        let second = FleetAcceptanceTests.nice(mcumgr, command)
        defer { second.stop() }
        let resumed = try await second.finished()
        #expect(resumed.status == 0, "\(resumed.stderr)")
        // The devices that ended before the interruption are shown from it; the others this run saw.
        let before = CLI.lines(interrupted.stdout).filter { $0.contains(" upgraded ") }.count
        #expect(
            CLI.lines(resumed.stdout).suffix(2) == [
                "12 upgraded",
                "this run contacted \(12 - before) device\(12 - before == 1 ? "" : "s"); \(before) shown from an earlier run",
            ],
            "\(resumed.stdout)"
        )
        for entry in await fleet.counters() { #expect(entry.counters.uploadsStarted == 1, "\(entry.name)") }
    }

    /// SIGKILL mid-rollout, then the same command: it finishes, and by the devices' own counters
    /// nobody was uploaded to from scratch twice (the second run resumed the uploads caught).
    @Test func aKilledRolloutResumesWithoutUploadingAnyDeviceFromScratchTwice() async throws {
        let mcumgr = try EntryTests.executable()
        var configuration = SimulatedDevice.Configuration.udp
        configuration.linkLatency = .milliseconds(20)
        let fleet = try await SimulatedFleet(count: 24, configuration: configuration)
        defer { Task { await fleet.stop() } }
        let scratch = Scratch()
        let image = try scratch.file("app.bin", try BLEBenchmark.syntheticImage(size: 128 * 1024))
        let inventory = try scratch.file("fleet.txt", Data(fleet.inventory.utf8))
        let state = scratch.missing("state.sqlite")
        let command = [
            "fleet", "upgrade", image, "--inventory", inventory, "--state", state, "--parallel", "6", "--json",
        ]
        let first = FleetAcceptanceTests.nice(mcumgr, command)
        defer { first.stop() }
        // Killed once some devices ended and another is between 10 % and 70 % of its upload, by
        // its own counters: bounded by events, not time.
        let size = 128 * 1024
        var caught: String?
        while caught == nil, !first.hasExited {
            let ended = first.output.stdout.components(separatedBy: "\"event\":\"ended\"").count - 1
            if ended >= 4 {
                caught = await fleet.counters().first {
                    (size / 10..<size * 7 / 10).contains($0.counters.imageBytesReceived)
                }?.name
            }
            if caught == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        let midUpload = try #require(caught, "no device was caught mid-upload: \(first.output)")
        first.send(SIGKILL)
        let killed = try await first.finished()
        #expect(killed.status != 0)
        #expect(await fleet.counters().contains { $0.counters.uploadsStarted == 0 }, "the kill came before the end")
        // The state says what a kill left: the device mid-upload is abandoned (no process holds the
        // file), and what it ran before is recorded although its attempt never ended.
        let status = await CLI.run(["fleet", "status", "--state", state, "--json"])
        let devices = try #require(try CLI.json(status.stdout)["devices"] as? [[String: Any]], "\(status)")
        let left = try #require(devices.first { $0["device"] as? String == midUpload })
        #expect(left["status"] as? String == "running" && left["abandoned"] as? Bool == true, "\(left)")
        #expect(left["version_before"] as? String != nil, "\(left)")
        let table = await CLI.run(["fleet", "status", "--state", state])
        #expect(
            CLI.lines(table.stdout).contains { $0.hasPrefix(midUpload) && $0.contains("abandoned") },
            "\(table.stdout)"
        )

        let second = FleetAcceptanceTests.nice(mcumgr, command)
        defer { second.stop() }
        let resumed = try await second.finished()
        #expect(resumed.status == 0, "\(resumed.stderr)")
        for entry in await fleet.counters() {
            #expect(
                entry.counters.uploadsStarted == 1,
                "\(entry.name) was uploaded to from scratch \(entry.counters.uploadsStarted) times"
            )
            #expect(entry.counters.resets == 1, "\(entry.name) was reset \(entry.counters.resets) times")
            if entry.name == midUpload {
                // Resumed, not sent again: less than twice the image reached its flash.
                #expect(entry.counters.imageBytesReceived < 2 * size, "\(entry)")
            }
        }
        let summary = try #require(try CLI.jsonLines(resumed.stdout).last)
        #expect((summary["counts"] as? [String: Any])?["upgraded"] as? Int == 24, "\(resumed.stdout)")
        // Every device answered: every one says what it ran before (no `?→`), the same for all.
        let befores = Set((summary["devices"] as? [[String: Any]] ?? []).map { $0["version_before"] as? String })
        #expect(befores.count == 1 && !befores.contains(nil), "\(befores)")
    }
}
