import Foundation
import MCUboot
import MCUmgrFleet
import SMPBytes
import SMPSimulator
import SMPTestSupport
import Testing

@testable import MCUmgrCommands

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The acceptance: 200 simulated devices over UDP (20 ms added to every answer, a 256 KiB
/// image, faults on a seeded 10 % of them) in one rollout with a canary, three waves and a failure
/// budget; then the same command again. The fleet and the rollout are the built `mcumgr`, run at
/// the lowest priority so that they do not starve the suite's timing tests; bounded by events.
@Suite(.serialized) struct FleetAcceptanceTests {
    /// A built `mcumgr` at the lowest priority. Beside the whole suite it gets almost no CPU
    /// until the other tests end (a fresh-clone CI run saw a worker still short of its end after
    /// 900 s), so its tests wait on events only, and its timeout is a guard against a hang.
    static func nice(_ mcumgr: String, _ arguments: [String]) -> RunningProcess {
        RunningProcess("/usr/bin/nice", ["-n", "19", mcumgr] + arguments, timeout: .seconds(3_600))
    }

    /// The simulator's entries (name, url, fault, counters, clients), written now (SIGUSR1).
    static func snapshotEntries(_ simulator: RunningProcess, _ path: String) async throws -> [[String: Any]] {
        try? FileManager.default.removeItem(atPath: path)
        simulator.send(SIGUSR1)
        var data: Data?
        while data == nil, !simulator.hasExited {
            try await Task.sleep(for: .milliseconds(10))
            data = FileManager.default.contents(atPath: path)
        }
        let written = try #require(data, "the simulator wrote no stats file")
        return try #require(try JSONSerialization.jsonObject(with: written) as? [[String: Any]])
    }

    /// The simulator's counters, written now (SIGUSR1), by device name.
    static func snapshot(_ simulator: RunningProcess, _ path: String) async throws -> [String: [String: Int]] {
        let entries = try await snapshotEntries(simulator, path)
        var counters: [String: [String: Int]] = [:]
        for entry in entries {
            guard let name = entry["name"] as? String, let values = entry["counters"] as? [String: Int] else {
                continue
            }
            counters[name] = values
        }
        return counters
    }

    @Test func twoHundredDevicesInOneRolloutThenASecondRunTouchesNothing() async throws {
        let mcumgr = try EntryTests.executable()
        let scratch = Scratch()
        let stats = scratch.missing("stats.json")
        let imageData = try BLEBenchmark.syntheticImage(size: 256 * 1024)
        let image = try scratch.file("app.bin", imageData)
        let simulator = Self.nice(
            mcumgr,
            [
                "simulator", "--udp", "127.0.0.1:0", "--count", "200", "--latency-ms", "20", "--fault-share", "10%",
                "--fault-seed", "22", "--slot-size", "0x80000", "--stats", stats,
            ]
        )
        defer { simulator.stop() }
        let served = try await simulator.waitForOutput { out, _ in CLI.lines(out).count == 200 }
        try #require(served, "\(simulator.output.stderr)")
        let lines = CLI.lines(simulator.output.stdout)
        let devices = lines.map { line -> (url: String, name: String, fault: String?) in
            let words = line.split(separator: " ").map(String.init)
            return (
                words[0], words[1], words.dropFirst(2).first { $0.hasPrefix("fault=") }.map { String($0.dropFirst(6)) }
            )
        }
        #expect(devices.count { $0.fault != nil } == 20)
        try #require(devices.prefix(2).allSatisfy { $0.fault == nil }, "the seed keeps the canary healthy")
        let inventory = try scratch.file("fleet.txt", Data(simulator.output.stdout.utf8))
        let command = [
            "fleet", "upgrade", image, "--inventory", inventory, "--state", scratch.missing("state.sqlite"),
            "--canary", "2", "--waves", "10%,50%,100%", "--max-failures", "10%", "--parallel", "48",
            "--link-retries", "1", "--timeout", "2", "--retries", "1", "--json",
        ]
        let first = try await Self.nice(mcumgr, command).finished()
        #expect(first.status == 3, "failures among the faulty devices: \(first.stderr.suffix(1000))")
        let events = try CLI.jsonLines(first.stdout)
        var ended: [String: [String: Any]] = [:]
        for event in events where event["event"] as? String == "ended" {
            ended[event["device"] as? String ?? ""] = event
        }
        for device in devices {
            let status = ended[device.name]?["status"] as? String
            switch device.fault {
            case nil, "slow", "power-loss":
                #expect(status == "upgraded", "\(device): \(String(describing: ended[device.name]))")
            case "dead": #expect(status == "unreachable", "\(device)")
            default:
                #expect(status == "failed", "\(device)")
                #expect((ended[device.name]?["error"] as? [String: Any])?["code"] as? String == "device_rejected")
            }
        }
        try Self.expectWavesHeld(events, devices: devices.map(\.name))
        // The summary, then — the command failed (status 3) — the error object every failing
        // command ends with.
        let summary = try #require(events.dropLast().last)
        #expect(summary["event"] as? String == "summary" && summary["halted"] is NSNull, "\(summary)")
        #expect((events.last?["error"] as? [String: Any])?["status"] as? Int == 3)

        let before = try await Self.snapshot(simulator, stats)
        let second = try await Self.nice(mcumgr, command).finished()
        #expect(second.status == 3, "\(second.stderr.suffix(1000))")
        #expect(!second.stdout.contains("\"event\":\"started\""), "the second run starts nobody")
        let secondSummary = try #require(try CLI.jsonLines(second.stdout).dropLast().last)
        #expect(secondSummary["contacted"] as? Int == 0, "and says so: \(secondSummary)")
        #expect((secondSummary["sources"] as? [String: Any])?["earlier_run"] as? Int == 200, "\(secondSummary)")
        let after = try await Self.snapshot(simulator, stats)
        #expect(before == after, "the second run sent nothing to any device")
        #expect(after.values.allSatisfy { $0["uploads_started"] ?? 0 <= 2 }, "one upload, two after a power loss")

        // The devices' own image lists: the image runs, confirmed, on every healthy one; no device
        // that answers was left without a running image.
        let hash = Hex.encode(try #require(try MCUbootImage(bytes: Array(imageData)).hash))
        for device in devices where device.fault != "dead" {
            let list = await CLI.run(["image", "list", "--json", "--conn", device.url])
            let images = (try? CLI.json(list.stdout))?["images"] as? [[String: Any]] ?? []
            #expect(images.contains { $0["active"] as? Bool == true }, "\(device.name) runs nothing: \(list.stdout)")
            if device.fault != "refusing" {
                let new = images.first { $0["hash"] as? String == hash }
                #expect(new?["active"] as? Bool == true && new?["confirmed"] as? Bool == true, "\(device.name)")
            }
        }
        simulator.send(SIGINT)
        _ = try await simulator.finished()
    }

    /// No device of a wave started before every device of the waves before it ended, by the order
    /// of the rollout's own events.
    static func expectWavesHeld(_ events: [[String: Any]], devices: [String]) throws {
        var startedAt: [String: Int] = [:]
        var endedAt: [String: Int] = [:]
        for (index, event) in events.enumerated() {
            guard let device = event["device"] as? String else { continue }
            if event["event"] as? String == "started", startedAt[device] == nil { startedAt[device] = index }
            if event["event"] as? String == "ended" { endedAt[device] = index }
        }
        let ends = RolloutPolicy(waves: [.percent(10), .percent(50), .percent(100)]).waveEnds(of: devices.count)
        for (position, device) in devices.enumerated() {
            let wave = RolloutGates.wave(of: position, ends: ends)
            guard wave > 0, let start = startedAt[device] else { continue }
            let earlier = devices.prefix(ends[wave - 1])
            #expect(
                earlier.allSatisfy { (endedAt[$0] ?? .max) < start },
                "\(device) started before wave \(wave + 1) was due"
            )
        }
    }
}
