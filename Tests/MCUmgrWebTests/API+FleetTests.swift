import Foundation
import HTTPTypes
import HummingbirdTesting
import MCUmgrFleet
import MCUmgrWeb
import NIOCore
import SMPBytes
import SMPCore
import SMPSimulator
import SMPTestSupport
import Testing

/// The Fleet screen's calls, against racks of in-process simulated devices. Every wait is bound
/// by the rollout's events (its stream ends with it), or by a device's record changing.
@Suite struct APIFleetTests {
    @Test func tenDevicesWithOneRefusingEndNineUpgradedAndOneFailed() async throws {
        let rack = await SimulatedRack(count: 10, refusing: [7])
        let harness = try WebHarness(connect: rack.connect)
        try await harness.test { client in
            let firmware = try await client.firmwareID(harness)
            let started = try await client.startFleet(
                harness,
                inventory: rack.inventory,
                firmware: firmware,
                extra: ["waves": "10%,50%,100%", "max_failures": "1", "parallel": 4]
            )
            #expect(started.status == .ok, "\(started.text)")
            let events = try await client.fleetSnapshots(harness)
            #expect(events.count >= 3, "live updates while it ran: \(events.count)")
            let revisions = events.compactMap { $0["revision"] as? Int }
            #expect(revisions == revisions.sorted(), "revisions never go back")
            #expect(Set(events.compactMap { $0["id"] as? String }).count == 1)
            let last = try #require(events.last)
            #expect(last["finished"] as? Bool == true)
            #expect(last["status"] as? String == "finished", "\(last)")
            let rows = try #require(last["devices"] as? [[String: Any]])
            #expect(rows.map { $0["device"] as? String } == (1...10).map { SimulatedRack.name($0) })
            for row in rows {
                #expect(row["seen"] as? String == "this run", "\(row)")
                if row["device"] as? String == "dev-07" {
                    #expect(row["status"] as? String == "failed", "\(row)")
                    #expect(row["tries"] as? Int == 1)
                    #expect((row["detail"] as? String)?.isEmpty == false, "\(row)")
                } else {
                    #expect(row["status"] as? String == "upgraded", "\(row)")
                    #expect(row["version_before"] as? String == "1.0.0" && row["version_after"] as? String == "2.0.0")
                    #expect(row["detail"] as? String == "")
                }
            }
            #expect((last["summary"] as? [String])?.first == "9 upgraded, 1 failed", "\(last)")
            let waves = try #require(last["waves"] as? [String: Any])
            #expect(waves["value"] as? Int == 3 && waves["max"] as? Int == 3, "\(waves)")
            let budget = try #require(last["budget"] as? [String: Any])
            #expect(budget["value"] as? Int == 1 && budget["max"] as? Int == 1, "\(budget)")
            // A second tab (or this one reopened) sees the same rollout.
            let shown = try await client.get("/api/fleet", harness).object()
            let rollout = try #require(shown["rollout"] as? [String: Any])
            #expect(rollout["id"] as? String == last["id"] as? String)
            #expect(rollout["revision"] as? Int == last["revision"] as? Int)
        }
    }

    @Test func aBadInventoryLineIsRefusedInOneLine() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let cases = [
                ("sim://?seed=1 dev-01\nftp://h dev-02", "Inventory: line 2: "),
                ("sim://?seed=1 dev-01\nsim://?seed=2 dev-01", "Inventory: line 2: 'dev-01' is named twice"),
                ("sim://?seed=1 dev-01 site", "Inventory: line 1: 'site': the name comes right after the URL"),
                ("# nothing\n\n", "Inventory: lists no device"),
            ]
            for (inventory, expected) in cases {
                let response = try await client.startFleet(harness, inventory: inventory, firmware: "f1")
                #expect(response.status == .badRequest, "\(inventory)")
                let line = try #require(response.errorLine)
                #expect(line.hasPrefix(expected), "\(line)")
                #expect(!line.contains("\n"))
            }
            let huge = String(repeating: "sim://?seed=1 dev-01\n", count: 2000)
            let tooLarge = try await client.startFleet(harness, inventory: huge, firmware: "f1")
            #expect(tooLarge.status == .contentTooLarge || tooLarge.status == .badRequest, "\(tooLarge.status)")
            #expect(tooLarge.errorLine?.contains("limit") == true, "\(tooLarge.text)")
        }
    }

    @Test func badWavesAndNumbersAreRefusedInOneLine() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let cases: [([String: any Sendable], String)] = [
                (["waves": "50%,10%"], "Waves: waves are cumulative and must grow"),
                (["waves": "ten"], "Waves: 'ten' is not a number of devices or a percentage"),
                (["waves": "10%,,100%"], "Waves: "),
                (["max_failures": "120%"], "Failure budget: '120%' is not a percentage"),
                (["parallel": 0], "Parallel: 0 is not a number from 1 to 1024"),
                (["canary": -1], "Canary: -1 is not a number"),
                (["mode": "yolo"], "Mode: 'yolo' is not one of"),
                (["link_retries": 101], "Link retries: 101 is not a number from 0 to 100"),
                (["ble_per_adapter": 0], "BLE per adapter: 0 is not a number from 1 to 64"),
                (["worker": "a\nb"], "Worker: a name of up to 64 characters on one line"),
            ]
            for (extra, expected) in cases {
                let response = try await client.startFleet(
                    harness,
                    inventory: "sim://?seed=1 dev-01",
                    firmware: "f1",
                    extra: extra
                )
                #expect(response.status == .badRequest, "\(extra)")
                #expect(response.errorLine?.hasPrefix(expected) == true, "\(response.text)")
            }
            let noFile = try await client.startFleet(harness, inventory: "sim://?seed=1 dev-01", firmware: "f9")
            #expect(noFile.status == .notFound && noFile.errorLine?.contains("no firmware file f9") == true)
        }
    }

    @Test func haltingStopsBeforeEveryDeviceIsDoneAndStartingAgainResumes() async throws {
        let rack = await SimulatedRack(count: 10)
        let harness = try WebHarness(connect: rack.connect)
        try await harness.test { client in
            let firmware = try await client.firmwareID(harness)
            let started = try await client.startFleet(
                harness,
                inventory: rack.inventory,
                firmware: firmware,
                extra: ["parallel": 1]
            )
            #expect(started.status == .ok, "\(started.text)")
            _ = try await client.waitForFleet(harness) { rollout in
                (rollout["devices"] as? [[String: Any]])?.contains { $0["status"] as? String == "upgraded" } == true
            }
            let halted = try await client.post("/api/fleet/halt", "{}", harness)
            #expect(halted.status == .ok, "\(halted.text)")
            let answer = try #require(try halted.object()["rollout"] as? [String: Any])
            #expect(["halting", "interrupted"].contains(answer["status"] as? String), "\(answer)")
            let last = try #require(try await client.fleetSnapshots(harness).last)
            #expect(last["status"] as? String == "interrupted", "\(last)")
            let rows = try #require(last["devices"] as? [[String: Any]])
            let upgraded = rows.count { $0["status"] as? String == "upgraded" }
            #expect(upgraded >= 1 && upgraded < 10, "\(rows)")
            #expect(rows.contains { $0["status"] as? String == "pending" })
            #expect(!rows.contains { $0["status"] as? String == "running" }, "none left mid-upgrade")
            for device in rack.devices.values { #expect(await device.stage == .application, "left bootable") }
            let again = try await client.post("/api/fleet/halt", "{}", harness)
            #expect(again.status == .conflict && again.errorLine == "no rollout runs")

            // The same file and mode again resumes from the server's state: the devices that had
            // ended are not touched and say so; the rest are upgraded now.
            let ended = Set(
                rows.filter { $0["status"] as? String == "upgraded" }.compactMap { $0["device"] as? String }
            )
            let resumed = try await client.startFleet(
                harness,
                inventory: rack.inventory,
                firmware: firmware,
                extra: ["parallel": 4]
            )
            #expect(resumed.status == .ok, "\(resumed.text)")
            let end = try #require(try await client.fleetSnapshots(harness).last)
            #expect(end["status"] as? String == "finished", "\(end)")
            for row in try #require(end["devices"] as? [[String: Any]]) {
                #expect(row["status"] as? String == "upgraded", "\(row)")
                let name = try #require(row["device"] as? String)
                #expect(row["seen"] as? String == (ended.contains(name) ? "earlier run" : "this run"), "\(row)")
            }
        }
    }

    @Test func aSecondStartWhileOneRunsIsRefusedWithWhatRuns() async throws {
        let rack = await SimulatedRack(count: 3)
        let harness = try WebHarness(connect: rack.connect)
        try await harness.test { client in
            let firmware = try await client.firmwareID(harness)
            let first = try await client.startFleet(
                harness,
                inventory: rack.inventory,
                firmware: firmware,
                extra: ["parallel": 1]
            )
            #expect(first.status == .ok, "\(first.text)")
            let second = try await client.startFleet(harness, inventory: rack.inventory, firmware: firmware)
            #expect(second.status == .conflict)
            #expect(
                second.errorLine?.hasPrefix("a rollout runs: app.bin (confirm-only) on 3 devices") == true,
                "\(second.text)"
            )
            // The running one is what another tab sees.
            let shown = try await client.get("/api/fleet", harness).object()
            let rollout = try #require(shown["rollout"] as? [String: Any])
            let firstRollout = try #require(try first.object()["rollout"] as? [String: Any])
            #expect(rollout["id"] as? String == firstRollout["id"] as? String)
            _ = try await client.post("/api/fleet/halt", "{}", harness)
            let last = try #require(try await client.fleetSnapshots(harness).last)
            #expect(last["finished"] as? Bool == true)
        }
    }

    /// With a state (`mcumgr ui --state`), the page's rollout is kept there — read back by the
    /// library's own store, not by the page — and the kept rollout is what the state's reader
    /// says. Without one, the page says how to get one.
    @Test func aRolloutIsKeptInTheGivenStateAndShownFromIt() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("mcumgr-kept-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("fleet.sqlite").path
        let asked = Locked<[String?]>([])
        let state = WebEnvironment.RolloutState(
            name: path,
            open: { try await SQLiteRolloutStore(path: path, exclusive: true) },
            status: { rollout in
                asked.withLock { $0.append(rollout) }
                let store = try await SQLiteRolloutStore(path: path)
                let kept = try await store.rollout(rollout)
                await store.close()
                return kept.map { [$0.0.id] + $0.1.map { "\($0.id) \($0.status)" } } ?? []
            },
            list: {
                let store = try await SQLiteRolloutStore(path: path)
                let list = try await store.rollouts()
                await store.close()
                return list
            }
        )
        let rack = await SimulatedRack(count: 3)
        let harness = try WebHarness(connect: rack.connect, rolloutState: state)
        let id = try await harness.test { client in
            let firmware = try await client.firmwareID(harness)
            let started = try await client.startFleet(harness, inventory: rack.inventory, firmware: firmware)
            #expect(started.status == .ok, "\(started.text)")
            let last = try #require(try await client.fleetSnapshots(harness).last)
            #expect(last["status"] as? String == "finished", "\(last)")
            let id = try #require(last["rollout"] as? String)

            let kept = try await client.get("/api/fleet/kept?rollout=\(id)", harness)
            #expect(kept.status == .ok, "\(kept.text)")
            #expect(try kept.object()["state"] as? String == path)
            #expect(
                try kept.object()["lines"] as? [String]
                    == [id] + (1...3).map { "\(SimulatedRack.name($0)) upgraded" }
            )
            let latest = try await client.get("/api/fleet/kept", harness)
            let upgraded = (1...3).map { "\(SimulatedRack.name($0)) upgraded" }
            #expect(try latest.object()["lines"] as? [String] == [id] + upgraded)

            let list = try await client.get("/api/fleet/kept/list", harness).object()
            #expect(list["state"] as? String == path)
            let rollouts = try #require(list["rollouts"] as? [[String: Any]])
            #expect(rollouts.count == 1 && rollouts.first?["id"] as? String == id, "\(rollouts)")
            #expect(
                rollouts.first?["devices"] as? String == "3 upgraded" && rollouts.first?["file"] as? String == "app.bin"
            )
            return id
        }
        #expect(asked.withLock { $0 } == [id, nil])
        let store = try await SQLiteRolloutStore(path: path)
        let (_, records) = try #require(try await store.rollout(nil))
        await store.close()
        #expect(records.map(\.status) == [.upgraded, .upgraded, .upgraded])
    }

    @Test func withoutAStateTheKeptRolloutSaysHowToKeepOne() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.get("/api/fleet/kept", harness)
            #expect(response.status == .notFound)
            #expect(response.errorLine?.contains("start mcumgr ui with --state FILE or --state postgres://") == true)
            let list = try await client.get("/api/fleet/kept/list", harness)
            #expect(list.status == .notFound && list.errorLine == response.errorLine)
        }
    }

    /// A device that failed stays failed when the same file runs again ("earlier run"); with
    /// Retry failed it is started again — here after the fault went away — and upgraded.
    @Test func retryFailedStartsTheFailedDeviceAgain() async throws {
        let rack = await SimulatedRack(count: 3, refusing: [2])
        let harness = try WebHarness(connect: rack.connect)
        try await harness.test { client in
            let firmware = try await client.firmwareID(harness)
            func run(_ extra: [String: any Sendable]) async throws -> [[String: Any]] {
                let started = try await client.startFleet(
                    harness,
                    inventory: rack.inventory,
                    firmware: firmware,
                    extra: extra
                )
                #expect(started.status == .ok, "\(started.text)")
                let last = try #require(try await client.fleetSnapshots(harness).last)
                return try #require(last["devices"] as? [[String: Any]])
            }
            let first = try await run([:])
            #expect(first.map { $0["status"] as? String } == ["upgraded", "failed", "upgraded"])
            await rack.devices["2"]?.setFaults(.none)
            let again = try await run([:])
            #expect(again.map { $0["status"] as? String } == ["upgraded", "failed", "upgraded"])
            #expect(again.map { $0["seen"] as? String } == ["earlier run", "earlier run", "earlier run"])
            let retried = try await run(["retry_failed": true, "worker": "bench-1"])
            #expect(retried.map { $0["status"] as? String } == ["upgraded", "upgraded", "upgraded"], "\(retried)")
            #expect(retried[1]["seen"] as? String == "this run")
            #expect(retried[1]["tries"] as? Int == 2)
        }
        #expect(await rack.devices["2"]?.imageStates.first { $0.isActive }?.version == "2.0.0")
    }

    @Test func aChangeWithoutOriginIsForbidden() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            for path in ["/api/fleet", "/api/fleet/halt"] {
                let response = try await client.execute(
                    uri: path,
                    method: .post,
                    headers: harness.headers(origin: nil, json: true),
                    body: ByteBuffer(string: #"{"inventory": "sim://", "firmware": "f1"}"#)
                )
                #expect(response.status == .forbidden, "\(path)")
                #expect(response.errorLine != nil)
            }
            let none = try await client.get("/api/fleet", harness).object()
            #expect(none["rollout"] == nil || none["rollout"] is NSNull)
            let events = try await client.get("/api/fleet/events", harness)
            #expect(events.status == .notFound)
        }
    }
}

extension TestClientProtocol {
    /// Sends the test image as `app.bin`; returns its id.
    fileprivate func firmwareID(_ harness: WebHarness) async throws -> String {
        let sent = try await sendFirmware(WebTestImage.bytes(), name: "app.bin", harness)
        #expect(sent.status == .ok, "\(sent.text)")
        return try #require(try sent.object()["id"] as? String)
    }

    /// Posts the Fleet form.
    fileprivate func startFleet(
        _ harness: WebHarness,
        inventory: String,
        firmware: String,
        extra: [String: any Sendable] = [:]
    ) async throws -> TestResponse {
        var fields: [String: Any] = ["inventory": inventory, "firmware": firmware]
        for (key, value) in extra { fields[key] = value }
        let json = String(decoding: try JSONSerialization.data(withJSONObject: fields), as: UTF8.self)
        return try await post("/api/fleet", json, harness)
    }

    /// Follows the rollout's live events until it ends; returns every snapshot, each drawn as
    /// the page draws it: the first message whole, each later one's changed rows applied to the
    /// message before it (whose revision it names).
    fileprivate func fleetSnapshots(_ harness: WebHarness) async throws -> [[String: Any]] {
        let stream = try await get("/api/fleet/events", harness)
        #expect(stream.headers[.contentType] == "text/event-stream")
        #expect(stream.text.hasPrefix("event: fleet\n"))
        var snapshots: [[String: Any]] = []
        for line in stream.text.split(separator: "\n") where line.hasPrefix("data: ") {
            var message = try #require(
                try JSONSerialization.jsonObject(with: Data(line.dropFirst(6).utf8)) as? [String: Any]
            )
            if let base = message.removeValue(forKey: "base") as? Int {
                let previous = try #require(snapshots.last, "the first message is whole")
                #expect(previous["revision"] as? Int == base, "a change names the message it follows")
                var rows = try #require(previous["devices"] as? [[String: Any]])
                for change in try #require(message.removeValue(forKey: "changed") as? [[String: Any]]) {
                    let index = try #require(change["index"] as? Int)
                    try #require(rows.indices.contains(index), "row \(index) of \(rows.count)")
                    rows[index] = try #require(change["row"] as? [String: Any])
                }
                message["devices"] = rows
            }
            snapshots.append(message)
        }
        return snapshots
    }

    /// Polls the rollout until `until` holds; bounded by a generous deadline, the poll interval
    /// only spaces the requests.
    fileprivate func waitForFleet(
        _ harness: WebHarness,
        until: ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            if let rollout = try await get("/api/fleet", harness).object()["rollout"] as? [String: Any],
                until(rollout)
            {
                return rollout
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the rollout never reached the expected state")
        return [:]
    }
}
