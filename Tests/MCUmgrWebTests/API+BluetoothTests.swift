import Foundation
import HTTPTypes
import HummingbirdTesting
import MCUmgrWeb
import SMPBytes
import SMPTestSupport
import Testing

/// The Devices screen's Bluetooth scan over the router, with the scan the server is given (the
/// command gives BlueZ's; `UIBrowserTests` runs that one against bluezoo in a browser).
@Suite struct APIBluetoothTests {
    /// What the scan was asked, and what it answers.
    final class Scanner: Sendable {
        struct Asked: Sendable {
            var adapter: String?
            var duration: Duration
        }

        let asked = Locked<[Asked]>([])
        let devices: [WebEnvironment.BluetoothDevice]

        init(_ devices: [WebEnvironment.BluetoothDevice]) { self.devices = devices }

        func scan(_ adapter: String?, _ duration: Duration) async throws -> [WebEnvironment.BluetoothDevice] {
            asked.withLock { $0.append(Asked(adapter: adapter, duration: duration)) }
            return devices
        }
    }

    @Test func aScanListsTheDevicesWithTheURLThatReachesThem() async throws {
        let scanner = Scanner([
            .init(name: "Zephyr", address: "00:AA:01:00:00:02", rssi: -40, adapter: "hci1", connected: false),
            .init(name: nil, address: "C0:FF:EE:00:00:01", rssi: nil, adapter: "hci1", connected: true),
        ])
        let harness = try WebHarness(scanBluetooth: scanner.scan)
        try await harness.test { client in
            let response = try await client.post("/api/ble/scan", #"{"seconds": 1.5, "adapter": "hci1"}"#, harness)
            #expect(response.status == .ok, "\(response.text)")
            let devices = try #require(try response.object()["devices"] as? [[String: Any]])
            #expect(devices.count == 2)
            #expect(devices.first?["name"] as? String == "Zephyr")
            #expect(devices.first?["rssi"] as? Int == -40)
            #expect(devices.first?["url"] as? String == "ble://00:AA:01:00:00:02?adapter=hci1")
            #expect(devices.last?["name"] == nil && devices.last?["rssi"] == nil)
            #expect(devices.last?["connected"] as? Bool == true)
            let defaults = try await client.post("/api/ble/scan", "{}", harness)
            #expect(defaults.status == .ok)
        }
        let asked = scanner.asked.withLock { $0 }
        #expect(asked.map(\.adapter) == ["hci1", nil])
        #expect(asked.map(\.duration) == [.milliseconds(1500), .seconds(2)])
    }

    @Test func withoutAScannerTheCommandLinesLineIsSaid() async throws {
        let harness = try WebHarness()
        try await harness.test { client in
            let response = try await client.post("/api/ble/scan", "{}", harness)
            #expect(response.status == .notImplemented)
            #expect(response.errorLine == "scanning needs BlueZ (Linux); on macOS, connect by name with ble://NAME")
        }
    }

    @Test(arguments: [
        (#"{"seconds": 0.1}"#, "Scan: 0.1 seconds is not between 0.5 and 10"),
        (#"{"seconds": 11}"#, "Scan: 11.0 seconds is not between 0.5 and 10"),
        (#"{"adapter": "wlan0"}"#, "Adapter: adapter 'wlan0' is not a Bluetooth adapter name; use e.g. adapter=hci0"),
        (
            #"{"adapter": "hci0&psm=5"}"#,
            "Adapter: adapter 'hci0&psm=5' is not a Bluetooth adapter name; use e.g. adapter=hci0"
        ),
    ])
    func aBadScanIsRefusedBeforeAnythingScans(body: String, line: String) async throws {
        let scanner = Scanner([])
        let harness = try WebHarness(scanBluetooth: scanner.scan)
        try await harness.test { client in
            let response = try await client.post("/api/ble/scan", body, harness)
            #expect(response.status == .badRequest)
            #expect(response.errorLine == line)
        }
        #expect(scanner.asked.withLock { $0 }.isEmpty)
    }

    struct NoAdapter: Error, CustomStringConvertible {
        var description: String { "no Bluetooth adapter hci7" }
    }

    @Test func aFailedScanIsOneLine() async throws {
        let harness = try WebHarness(scanBluetooth: { _, _ in throw NoAdapter() })
        try await harness.test { client in
            let response = try await client.post("/api/ble/scan", #"{"adapter": "hci7"}"#, harness)
            #expect(response.status == .badGateway)
            #expect(response.errorLine == "no Bluetooth adapter hci7")
        }
    }
}
