#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth
    import Foundation
    import SMPLink

    /// Where to find the SMP characteristic, and how long to look.
    public struct CoreBluetoothConfiguration: Sendable, Hashable {
        /// The SMP service UUID (Zephyr's by default; some products use their own): 4 or 8
        /// hexadecimal digits (a 16- or 32-bit UUID) or the 128-bit form with hyphens.
        public var serviceUUID: String
        /// The SMP characteristic UUID, in the same forms.
        public var characteristicUUID: String
        /// How long to scan for the peripheral.
        public var scanTimeout: Duration
        /// How long each of connect, discover and subscribe may take.
        public var stepTimeout: Duration
        /// How long a refused write waits for `peripheralIsReady(toSendWriteWithoutResponse:)`
        /// (at least 1 ms). The callback goes missing on some macOS versions: when this runs out
        /// and `canSendWriteWithoutResponse` is still `false`, the next write goes out anyway, as
        /// Nordic's library does after 15 ms, so a transfer never hangs.
        public var readyPollInterval: Duration

        /// Creates a configuration.
        public init(
            serviceUUID: String = SMPGATT.serviceUUID,
            characteristicUUID: String = SMPGATT.characteristicUUID,
            scanTimeout: Duration = .seconds(10),
            stepTimeout: Duration = .seconds(20),
            readyPollInterval: Duration = .milliseconds(50)
        ) {
            self.serviceUUID = serviceUUID
            self.characteristicUUID = characteristicUUID
            self.scanTimeout = scanTimeout
            self.stepTimeout = stepTimeout
            self.readyPollInterval = readyPollInterval
        }

        /// Throws unless both UUIDs have a form `CBUUID(string:)` accepts: given anything else it
        /// raises an Objective-C exception, which Swift cannot catch (the process ends).
        func validateUUIDs() throws {
            for (what, text) in [("service", serviceUUID), ("characteristic", characteristicUUID)] {
                let isShort =
                    (text.utf8.count == 4 || text.utf8.count == 8)
                    && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x46).contains($0 & 0xDF) }
                guard isShort || UUID(uuidString: text) != nil else {
                    throw SMPTransportError(
                        .invalidAddress,
                        "\(what) UUID '\(text)' is not 4 or 8 hex digits or a 128-bit UUID with hyphens"
                    )
                }
            }
        }
    }

    extension GATTTransport {
        /// SMP over CoreBluetooth to a peripheral named `target`, or with that identifier (a UUID).
        ///
        /// The first connection scans (by name or identifier; with an empty name, the first
        /// peripheral advertising the SMP service); later ones, e.g. after a reset, retrieve the same
        /// peripheral by identifier, and scan again when connecting to it failed or timed out (the
        /// device may have come back under a new identifier): for the name or identifier, or, when
        /// it is the only one around, a peripheral advertising the SMP service (a loader or
        /// recovery image under another name). `ble://NAME` in the command line.
        /// Each `connect()` first checks the process's Bluetooth usage description
        /// (``BluetoothUsageDescription``) and throws `.unavailable` without one.
        /// Malformed UUIDs in `configuration` make each `connect()` throw `.invalidAddress`.
        /// - Parameters:
        ///   - target: a name, a CoreBluetooth identifier, or empty for the first SMP peripheral.
        ///   - configuration: UUIDs and timeouts.
        ///   - transport: device reassembly.
        /// - Returns: the transport.
        public static func coreBluetooth(
            _ target: String,
            configuration: CoreBluetoothConfiguration = .init(),
            transport: GATTTransport.Configuration = .init()
        ) -> GATTTransport {
            let central = CoreBluetoothCentral(configuration: configuration)
            return GATTTransport(endpointDescription: "ble://\(target)", configuration: transport) {
                try await central.connect(to: target)
            }
        }
    }
#endif
