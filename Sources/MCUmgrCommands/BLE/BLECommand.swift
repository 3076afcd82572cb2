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
                D-Bus (DBUS_SYSTEM_BUS_ADDRESS names another bus). Anywhere, with --hci: through \
                our own LE host on that controller (a dongle running Zephyr's hci_uart, or a \
                virtual controller on a socket). Connect with mcumgr --conn ble://NAME or \
                ble://ADDRESS (adding ?hci=CONTROLLER for the same controller).
                """
        )

        @Flag(name: .long, help: "Print JSON on stdout and nothing else.")
        var json = false

        @Option(parsing: .unconditional, help: "Seconds to scan (0.5-300).")
        var timeout: Double = 5

        @Option(help: "The Bluetooth adapter, e.g. hci1 (default: the first).")
        var adapter: String?

        @OptionGroup var hci: HCIControllerOptions

        func validate() throws {
            guard timeout >= 0.5, timeout <= 300 else { throw ValidationError("--timeout must be 0.5-300 seconds") }
            if try hci.address() != nil {
                if adapter != nil { throw ValidationError("--adapter is BlueZ's; --hci is our own host's controller") }
                return
            }
            #if !SMP_BLUEZ
                throw ValidationError(Self.needsBlueZ)
            #endif
        }

        static let needsBlueZ =
            "'mcumgr ble scan' needs BlueZ (Linux) or --hci CONTROLLER; on macOS, connect by name with ble://NAME"

        func run() async throws {
            if let controller = try hci.address() {
                let devices = try await ScannedDevice.scan(controller, duration: .milliseconds(Int(timeout * 1000)))
                print(devices)
                return
            }
            try await scanWithSystemBluetooth()
        }

        /// Prints the devices found, one a line (or as JSON).
        private func print(_ devices: [ScannedDevice]) {
            if json {
                Console.out(ScannedDevice.json(devices).rendered())
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

        #if !SMP_BLUEZ
            private func scanWithSystemBluetooth() async throws { throw ValidationError(Self.needsBlueZ) }
        #else
            private func scanWithSystemBluetooth() async throws {
                let devices: [BlueZScanner.Device]
                do {
                    devices = try await BlueZScanner.scan(adapter: adapter, timeout: .milliseconds(Int(timeout * 1000)))
                } catch {
                    throw error.transportError
                }
                print(
                    devices.map {
                        ScannedDevice(
                            name: $0.name,
                            address: $0.address,
                            rssi: $0.rssi,
                            connected: $0.connected,
                            adapter: $0.adapter
                        )
                    }
                )
            }
        #endif
    }
}
