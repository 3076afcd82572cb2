import ArgumentParser
import Foundation
import SMPBLETransport

/// `mcumgr ble scan`: SMP devices in range, because a user has to find the device first.
struct BLECommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ble",
        abstract: "Bluetooth LE: find SMP devices.",
        subcommands: [Scan.self]
    )

    /// `mcumgr ble scan [--timeout S] [--adapter hciN] [--json]`.
    struct Scan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "scan",
            abstract: "List SMP devices in range: name, address and signal strength.",
            discussion: """
                Runs Bluetooth LE discovery filtered on the SMP service \
                (8D53DC1D-1DB7-4CD3-868B-8A527460AA84) for --timeout seconds and lists the \
                devices that advertised it, strongest first. Linux: through BlueZ on the system \
                D-Bus (DBUS_SYSTEM_BUS_ADDRESS names another bus). Connect with \
                mcumgr --conn ble://NAME or ble://ADDRESS.
                """
        )

        @Flag(name: .long, help: "Print JSON on stdout and nothing else.")
        var json = false

        @Option(parsing: .unconditional, help: "Seconds to scan (0.5-300).")
        var timeout: Double = 5

        @Option(help: "The Bluetooth adapter, e.g. hci1 (default: the first).")
        var adapter: String?

        func validate() throws {
            guard timeout >= 0.5, timeout <= 300 else { throw ValidationError("--timeout must be 0.5-300 seconds") }
            #if !SMP_BLUEZ
                throw ValidationError(Self.needsBlueZ)
            #endif
        }

        static let needsBlueZ = "'mcumgr ble scan' needs BlueZ (Linux); on macOS, connect by name with ble://NAME"

        #if !SMP_BLUEZ
            func run() async throws { throw ValidationError(Self.needsBlueZ) }
        #else
            func run() async throws {
                let devices: [BlueZScanner.Device]
                do {
                    devices = try await BlueZScanner.scan(adapter: adapter, timeout: .milliseconds(Int(timeout * 1000)))
                } catch {
                    throw error.transportError
                }
                if json {
                    Console.out(Self.json(devices).rendered())
                    return
                }
                guard !devices.isEmpty else {
                    Console.out("no SMP devices found in \(timeout) s")
                    return
                }
                for device in devices {
                    let rssi = device.rssi.map { "\($0) dBm" } ?? "-"
                    let name = device.name ?? "(no name)"
                    Console.out(
                        "\(device.address)  \(rssi.padding(toLength: 8, withPad: " ", startingAt: 0))  \(name)"
                            + (device.connected ? "  (connected)" : "")
                    )
                }
            }

            /// The devices found as `{"devices": [...]}`, absent names and signal strengths as null.
            private static func json(_ devices: [BlueZScanner.Device]) -> JSONValue {
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
        #endif
    }
}
