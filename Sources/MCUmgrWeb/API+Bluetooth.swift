import Foundation
import Hummingbird
import MCUmgrConnect

/// Devices: a Bluetooth LE scan for devices advertising the SMP service, as `mcumgr ble scan`
/// runs it; the page repeats it while its scan is on, so the list stays live.
extension API {
    struct ScanRequest: Codable, Sendable {
        /// How long, 0.5–10 s (default 2): one round of the page's live scan.
        var seconds: Double?
        /// The adapter (`hci1`); empty or absent: the first.
        var adapter: String?
    }

    struct ScannedDevice: Encodable, Sendable {
        var name: String?
        var address: String
        var rssi: Int?
        var adapter: String
        var connected: Bool
        /// The URL that connects to it through the adapter that saw it.
        var url: String
    }

    struct ScanAnswer: Encodable, Sendable { var devices: [ScannedDevice] }

    /// Where nothing can scan, the command line's words for it.
    static let noScanner = "scanning needs BlueZ (Linux); on macOS, connect by name with ble://NAME"

    func registerBluetooth(on router: Router<BasicRequestContext>) {
        router.post("/api/ble/scan") { request, _ in
            try await answer {
                let body = try await Self.body(ScanRequest.self, from: request)
                let (adapter, duration) = try Self.scanRequest(body)
                guard let scan = environment.scanBluetooth else { throw WebError(.notImplemented, Self.noScanner) }
                let devices = try await scan(adapter, duration)
                return try Self.json(ScanAnswer(devices: devices.map(Self.scanned)))
            }
        }
    }

    /// The adapter and the duration, checked.
    static func scanRequest(_ body: ScanRequest) throws(WebError) -> (String?, Duration) {
        let seconds = body.seconds ?? 2
        guard seconds.isFinite, seconds >= 0.5, seconds <= 10 else {
            throw WebError(.badRequest, "Scan: \(seconds) seconds is not between 0.5 and 10")
        }
        var adapter: String?
        if let text = body.adapter?.trimmingCharacters(in: .whitespaces), !text.isEmpty {
            // The URL parser's rule for adapter names, so a scan and its connection agree (the
            // name escaped: it is one value, whatever it holds).
            let escaped = text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            do {
                _ = try ConnectionURL(parsing: "ble://probe?adapter=\(escaped)")
            } catch {
                throw WebError(.badRequest, "Adapter: \(error)")
            }
            adapter = text
        }
        return (adapter, .milliseconds(Int(seconds * 1000)))
    }

    static func scanned(_ device: WebEnvironment.BluetoothDevice) -> ScannedDevice {
        let url = ConnectionURL.ble(name: device.address, psm: nil, adapter: device.adapter, pair: false)
        return ScannedDevice(
            name: device.name,
            address: device.address,
            rssi: device.rssi,
            adapter: device.adapter,
            connected: device.connected,
            url: url.description
        )
    }
}
