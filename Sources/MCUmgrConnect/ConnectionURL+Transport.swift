import Logging
import SMPBLETransport
import SMPHCIHost
import SMPLink
import SMPSerialTransport
import SMPUDPTransport

extension ConnectionURL {
    /// What shapes the transports a URL makes, beyond the URL itself.
    public struct TransportOptions: Sendable {
        /// The client's request timeout: a BLE link drops a half-received response after half of
        /// it (at most a second), so a retry's answer never lands behind a stale head.
        public var requestTimeout: Duration
        /// Makes each transport's logger from its label (`mcumgr.transport.udp`, …).
        public var makeLogger: @Sendable (String) -> Logger

        /// Creates options.
        /// - Parameters:
        ///   - requestTimeout: the client's request timeout.
        ///   - makeLogger: a logger for a label; by default swift-log's bootstrapped handler.
        public init(
            requestTimeout: Duration = .seconds(3),
            makeLogger: @escaping @Sendable (String) -> Logger = { Logger(label: $0) }
        ) {
            self.requestTimeout = requestTimeout
            self.makeLogger = makeLogger
        }
    }

    /// A transport that reaches the device this URL names.
    ///
    /// `sim://` is not served here: the simulated device lives in `SMPSimulator`, which an app or
    /// a tool links on purpose (the `mcumgr` command does, and serves `sim://` itself).
    /// - Parameter options: timeouts and logging.
    /// - Returns: a transport; nothing is opened until its `connect()`.
    /// - Throws: `SMPTransportError` `.unavailable` for `sim://` and for Bluetooth LE where this
    ///   platform has no stack we can reach.
    public func makeTransport(_ options: TransportOptions = .init()) throws -> any SMPTransport {
        switch self {
        case .udp(let host, let port):
            return UDPTransport(host: host, port: port, logger: options.makeLogger("mcumgr.transport.udp"))
        case .serial(let path, let baud, let raw, let mtu):
            return SerialTransport(
                path: path,
                baudRate: baud,
                framing: raw ? .raw : .console(),
                maximumFrameSize: mtu,
                logger: options.makeLogger("mcumgr.transport.serial")
            )
        case .ble(let name, _, _, _, .some(let controller)):
            // Our own LE host: the same on every platform, whatever the system's Bluetooth is.
            let idle = min(.seconds(1), options.requestTimeout / 2)
            return GATTTransport.hci(
                .init(controller: controller, target: name),
                configuration: .init(reassemblyIdleTimeout: idle)
            )
        case .ble(let name, let psm, let adapter, let pair, nil):
            return try Self.bluetoothTransport(name, psm: psm, adapter: adapter, pair: pair, options: options)
        case .simulator:
            throw SMPTransportError(
                .unavailable,
                "sim:// is the simulated device of the mcumgr tool; in an app, serve a SimulatedDevice (SMPSimulator) through a LoopbackTransport"
            )
        }
    }

    #if canImport(CoreBluetooth)
        private static func bluetoothTransport(
            _ name: String,
            psm: UInt16?,
            adapter: String?,
            pair: Bool,
            options: TransportOptions
        ) throws -> any SMPTransport {
            if let psm { return L2CAPTransport(name, psm: psm) }
            // A truncated response's head must be dropped before a retry's answer arrives.
            let idle = min(.seconds(1), options.requestTimeout / 2)
            return GATTTransport.coreBluetooth(name, transport: .init(reassemblyIdleTimeout: idle))
        }
    #elseif SMP_BLUEZ
        /// BlueZ over the system D-Bus: the same GATT core as CoreBluetooth (see `BlueZCentral`).
        private static func bluetoothTransport(
            _ name: String,
            psm: UInt16?,
            adapter: String?,
            pair: Bool,
            options: TransportOptions
        ) throws -> any SMPTransport {
            guard psm == nil else {
                throw SMPTransportError(
                    .unavailable,
                    "ble://…?psm= (an L2CAP channel) needs CoreBluetooth (macOS); on Linux use the GATT link: ble://\(name)"
                )
            }
            let idle = min(.seconds(1), options.requestTimeout / 2)
            return GATTTransport.bluez(
                .init(target: name, adapter: adapter, pair: pair),
                configuration: .init(reassemblyIdleTimeout: idle)
            )
        }
    #else
        private static func bluetoothTransport(
            _ name: String,
            psm: UInt16?,
            adapter: String?,
            pair: Bool,
            options: TransportOptions
        ) throws -> any SMPTransport {
            throw SMPTransportError(
                .unavailable,
                "Bluetooth LE needs CoreBluetooth (Apple platforms) or BlueZ (Linux); use udp:// or serial:// here"
            )
        }
    #endif
}
