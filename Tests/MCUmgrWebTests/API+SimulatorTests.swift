import Foundation
import HTTPTypes
import HummingbirdTesting
import MCUmgr
import MCUmgrConnect
import MCUmgrWeb
import NIOCore
import SMPCore
import Testing

/// The Simulator screen's calls: devices started from the page answer over UDP at the URL the
/// page shows (checked by a client of our own straight over the socket, not by the page), their
/// flash and next boot are the device's own, and faults and buttons act on them.
@Suite struct APISimulatorTests {
    /// A quick reboot, so an upgrade's reset is over soon.
    static let quick = #"reset_ms=10&boot_ms=100"#

    @Test func devicesStartedFromThePageAnswerAtTheirURLs() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let started = try await client.post(
                "/api/simulator",
                #"{"count": 3, "fault_share": "1", "fault_kind": "refusing", "seed": 4}"#,
                harness
            )
            #expect(started.status == .ok, "\(started.text)")
            let devices = try #require(try started.object()["devices"] as? [[String: Any]])
            #expect(devices.compactMap { $0["name"] as? String } == ["sim-001", "sim-002", "sim-003"])
            #expect(devices.allSatisfy { $0["fault"] as? String == "refusing" })
            #expect(devices.allSatisfy { $0["stage"] as? String == "application" })
            let urls = devices.compactMap { $0["url"] as? String }
            #expect(urls.count == 3 && urls.allSatisfy { $0.hasPrefix("udp://127.0.0.1:") }, "\(urls)")
            let inventory = try #require(try started.object()["inventory"] as? String)
            let lines = zip(urls, 1...3).map { "\($0) sim-00\($1) fault=refusing" }
            #expect(inventory.split(separator: "\n").map(String.init) == lines)
            for url in urls {
                let device = try await SMPClient.connect(try ConnectionURL(parsing: url).makeTransport())
                #expect(try await device.send(OSManagement.Echo(text: "here")).text == "here")
                await device.close()
            }
            let stopped = try await client.post("/api/simulator/stop", "{}", harness).object()
            #expect((stopped["devices"] as? [Any])?.isEmpty == true)
        }
    }

    /// A test-only upgrade from the page's Upgrade screen to a simulated device: the Simulator
    /// screen then shows the test image running unconfirmed and that the next reset reverts
    /// it; a power cycle does so.
    @Test func theNextBootIsTheDevicesOwnAndAPowerCycleDoesIt() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let started = try await client.post("/api/simulator", #"{"options": "\#(Self.quick)"}"#, harness)
            let url = try #require((try started.object()["devices"] as? [[String: Any]])?.first?["url"] as? String)
            let id = try await client.addDevice(harness, url: url)
            let sent = try await client.sendFirmware(WebTestImage.bytes(version: "2.0.0"), name: "app.bin", harness)
            let firmware = try #require(try sent.object()["id"] as? String)
            let upgrade = try await client.post(
                "/api/devices/\(id)/upgrade",
                #"{"firmware": "\#(firmware)", "mode": "test-only"}"#,
                harness
            )
            #expect(upgrade.status == .ok, "\(upgrade.text)")
            #expect(try await client.snapshots(id, harness).last?["status"] as? String == "succeeded")

            let detail = try await client.get("/api/simulator/sim-001", harness).object()
            let slots = try #require(detail["slots"] as? [[String: Any]])
            #expect(slots.first?["version"] as? String == "2.0.0")
            #expect(slots.first?["flags"] as? [String] == ["active", "bootable"], "\(slots)")
            #expect((detail["next_boot"] as? [String])?.contains("image 0: revert swap") == true, "\(detail)")
            #expect(detail["next_running"] as? [String] == ["image 0: 1.0.0 from slot 0"])
            let boots = try #require((detail["device"] as? [String: Any])?["boots"] as? Int)

            let cycled = try await client.post("/api/simulator/sim-001", #"{"action": "power-cycle"}"#, harness)
            #expect(cycled.status == .ok, "\(cycled.text)")
            let after = try cycled.object()
            #expect((after["device"] as? [String: Any])?["boots"] as? Int == boots + 1)
            #expect((after["slots"] as? [[String: Any]])?.first?["version"] as? String == "1.0.0", "\(after)")
            _ = try await client.post("/api/simulator/stop", "{}", harness)
        }
    }

    /// Busy and silence reach the device as a client sees them; clearing brings it back.
    @Test func faultsFromThePageActOnTheDevice() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let started = try await client.post("/api/simulator", "{}", harness)
            let url = try #require((try started.object()["devices"] as? [[String: Any]])?.first?["url"] as? String)
            // Patient for answers (a loaded machine may be slow), no resends of its own; a second
            // client's short wait only meets a device that answers nothing at all.
            let device = try await SMPClient.connect(
                try ConnectionURL(parsing: url).makeTransport(),
                configuration: .init(timeout: .seconds(30), retries: 0, busyRetries: 0)
            )
            let impatient = try await SMPClient.connect(
                try ConnectionURL(parsing: url).makeTransport(),
                configuration: .init(timeout: .milliseconds(300), retries: 0)
            )

            let busy = try await client.post("/api/simulator/sim-001", #"{"action": "busy"}"#, harness).object()
            #expect((busy["device"] as? [String: Any])?["faults"] as? [String] == ["answer 5 requests with EBUSY"])
            let refused = await #expect(throws: SMPDeviceError.self) {
                try await device.send(OSManagement.Echo(text: "now?"))
            }
            #expect(refused?.isTransientRefusal == true, "\(String(describing: refused))")

            _ = try await client.post("/api/simulator/sim-001", #"{"action": "silence"}"#, harness)
            await #expect(throws: (any Error).self) { try await impatient.send(OSManagement.Echo(text: "there?")) }

            let cleared = try await client.post("/api/simulator/sim-001", #"{"action": "clear-faults"}"#, harness)
            #expect((try cleared.object()["device"] as? [String: Any])?["faults"] as? [String] == [])
            #expect(try await device.send(OSManagement.Echo(text: "back")).text == "back")
            await device.close()
            await impatient.close()
            _ = try await client.post("/api/simulator/stop", "{}", harness)
        }
    }

    @Test(arguments: [
        (#"{"count": 0}"#, "Devices: 0 is not a number from 1 to 1024"),
        (#"{"options": "mode=sideways"}"#, "Options: "),
        (#"{"options": "state_dir=/tmp/x"}"#, "Options: state_dir is not taken here"),
        (#"{"fault_share": "150%"}"#, "Faulty share: '150%' is not between 0 and 1 (0% and 100%)"),
        (#"{"fault_kind": "haunted"}"#, "Fault: 'haunted' is not one of any, dead, refusing, power-loss, slow"),
    ])
    func aBadFormIsRefusedInOneLine(body: String, line: String) async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.post("/api/simulator", body, harness)
            #expect(response.status == .badRequest)
            #expect(response.errorLine?.hasPrefix(line) == true, "\(response.text)")
            let listed = try await client.get("/api/simulator", harness).object()
            #expect((listed["devices"] as? [Any])?.isEmpty == true)
        }
    }

    @Test func anUnknownDeviceOrActionIsRefusedNamingWhatThereIs() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let missing = try await client.post("/api/simulator/sim-404", #"{"action": "busy"}"#, harness)
            #expect(missing.status == .notFound)
            #expect(missing.errorLine == "no simulated device 'sim-404' runs on this server")
            _ = try await client.post("/api/simulator", "{}", harness)
            let bad = try await client.post("/api/simulator/sim-001", #"{"action": "explode"}"#, harness)
            #expect(bad.status == .badRequest)
            #expect(bad.errorLine?.hasPrefix("action 'explode' is not one of power-cycle, recovery-button,") == true)
            _ = try await client.post("/api/simulator/stop", "{}", harness)
        }
    }

    /// Starting devices changes what runs on the machine: the page's Origin is required.
    @Test func startingDevicesWithoutOriginIsForbidden() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.execute(
                uri: "/api/simulator",
                method: .post,
                headers: harness.headers(origin: nil, json: true),
                body: ByteBuffer(string: "{}")
            )
            #expect(response.status == .forbidden)
            let listed = try await client.get("/api/simulator", harness).object()
            #expect((listed["devices"] as? [Any])?.isEmpty == true)
        }
    }
}
