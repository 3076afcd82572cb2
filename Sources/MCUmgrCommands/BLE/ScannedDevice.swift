import SMPHCI
import SMPHCIHost

/// One device as `mcumgr ble scan` prints it, whichever Bluetooth found it.
struct ScannedDevice: Sendable, Hashable {
    var name: String?
    var address: String
    var rssi: Int?
    var connected: Bool
    /// The BlueZ adapter (`hci0`) or our host's controller (`tcp://…`) that saw it.
    var adapter: String

    /// The devices as `{"devices": [...]}`, absent names and signal strengths as null.
    static func json(_ devices: [ScannedDevice]) -> JSONValue {
        let list = devices.map { device in
            JSONValue.object([
                ("name", device.name.map(JSONValue.string) ?? .null),
                ("address", .string(device.address)),
                ("rssi", device.rssi.map { JSONValue.int(Int64($0)) } ?? .null),
                ("connected", .bool(device.connected)),
                ("adapter", .string(device.adapter)),
            ])
        }
        return .object([("devices", .array(list))])
    }

    /// Scans through our own LE host on a controller.
    /// - Parameters:
    ///   - controller: the controller.
    ///   - duration: how long to scan.
    /// - Returns: the advertisers of the SMP service, strongest first.
    /// - Throws: `SMPTransportError` when the controller cannot be used.
    static func scan(_ controller: HCIControllerAddress, duration: Duration) async throws -> [ScannedDevice] {
        let central = HCICentral(.init(controller: controller, target: ""))
        let seen: [DiscoveredPeripheral]
        do {
            seen = try await central.scan(for: duration)
        } catch {
            await central.close()
            throw error
        }
        await central.close()
        return seen.filter { $0.serviceUUIDs.contains(.smpService) }
            .sorted { ($0.rssi ?? .min) > ($1.rssi ?? .min) }
            .map {
                ScannedDevice(
                    name: $0.localName,
                    address: $0.address.description,
                    rssi: $0.rssi.map(Int.init),
                    connected: false,
                    adapter: controller.location
                )
            }
    }
}
