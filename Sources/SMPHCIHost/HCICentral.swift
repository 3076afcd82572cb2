import Logging
import SMPHCI
import SMPLink

/// SMP peripherals through our own LE host on one controller: finds a device by name or
/// address, connects, sets GATT up, and hands back the SMP characteristic as an ``HCIGATTLink``.
///
/// The controller is opened on the first `connect()` and kept for the next (a reconnection
/// after the device resets does not bring the controller up again); when it goes away the next
/// `connect()` opens it afresh.
public actor HCICentral {
    /// What to connect to, and how long each step may take.
    public struct Options: Sendable {
        /// The controller.
        public var controller: HCIControllerAddress
        /// The device: its advertised name, or its address (`AA:BB:CC:DD:EE:FF`).
        public var target: String
        /// How long to look for the device.
        public var scanTimeout: Duration
        /// How long the device may take to accept the connection.
        public var connectTimeout: Duration
        /// How long the device may leave an ATT request unanswered (ATT's own 30 s; tests
        /// shorten it to see the rule applied).
        var attTransactionTimeout = ATTBearer.defaultTransactionTimeout

        /// Creates options.
        /// - Parameters:
        ///   - controller: the controller.
        ///   - target: the device's name or address.
        ///   - scanTimeout: how long to look for it.
        ///   - connectTimeout: how long it may take to accept the connection.
        public init(
            controller: HCIControllerAddress,
            target: String,
            scanTimeout: Duration = .seconds(10),
            connectTimeout: Duration = .seconds(10)
        ) {
            self.controller = controller
            self.target = target
            self.scanTimeout = scanTimeout
            self.connectTimeout = connectTimeout
        }
    }

    /// The options.
    public nonisolated let options: Options
    private let logger: Logger
    private let clock: SMPClock
    /// The controller's host, shared with the other centrals of this process on that controller
    /// (`HCIHostPool`).
    private var host: HCIHost?

    /// Creates a central; nothing is opened until `connect()`.
    /// - Parameters:
    ///   - options: the controller and the device.
    ///   - clock: the clock of the host's timeouts.
    ///   - logger: the logger.
    public init(_ options: Options, clock: SMPClock = .continuous, logger: Logger = Logger(label: "mcumgr.hci")) {
        self.options = options
        self.clock = clock
        self.logger = logger
    }

    /// Finds the device, connects and subscribes to its SMP characteristic.
    /// - Returns: the link.
    /// - Throws: `SMPTransportError` `.connectionFailed` naming the step that failed and why.
    public func connect() async throws -> HCIGATTLink {
        let host = try await openHost()
        let peripheral = try await find(on: host)
        let connection: HCIConnection
        do {
            connection = try await host.connect(
                to: peripheral.address,
                type: peripheral.addressType,
                timeout: options.connectTimeout
            )
        } catch {
            throw SMPTransportError(
                .connectionFailed,
                "cannot connect to \(describe(peripheral)): \(error)",
                cause: error
            )
        }
        let bearer = ATTBearer(connection, clock: clock, transactionTimeout: options.attTransactionTimeout)
        do {
            return HCIGATTLink(bearer: bearer, channel: try await bearer.setUpClient())
        } catch {
            await connection.disconnect()
            throw SMPTransportError(
                .connectionFailed,
                "cannot use SMP over GATT on \(describe(peripheral)): \(error)",
                cause: error
            )
        }
    }

    /// Scans through the controller, for `mcumgr ble scan --hci`.
    /// - Parameter duration: how long to scan.
    /// - Returns: every advertiser seen.
    /// - Throws: `SMPTransportError` when the controller cannot be used.
    public func scan(for duration: Duration) async throws -> [DiscoveredPeripheral] {
        let host = try await openHost()
        do {
            return try await host.scan(for: duration)
        } catch {
            throw SMPTransportError(
                .connectionFailed,
                "cannot scan through \(options.controller): \(error)",
                cause: error
            )
        }
    }

    /// Lets go of the controller: its host closes it when no other central of this process and
    /// no connection uses it.
    public func close() {
        host = nil
    }

    private func openHost() async throws -> HCIHost {
        if let host, await host.isUsable { return host }
        let (controller, clock, logger) = (options.controller, clock, logger)
        do {
            let opened = try await HCIHostPool.shared.host(for: controller) {
                // A static random address of the host's own: many controllers (an nRF52840 running
                // `hci_uart`) have no public address, and Bumble's virtual link routes LE data by
                // the sender's random address whatever address type it connected with.
                var generator = SystemRandomNumberGenerator()
                return try await HCIHost.open(
                    controller,
                    randomAddress: .randomStatic(using: &generator),
                    clock: clock,
                    logger: logger
                )
            }
            host = opened
            return opened
        } catch {
            throw SMPTransportError(
                .connectionFailed,
                "cannot use the controller at \(options.controller): \(error)",
                cause: error
            )
        }
    }

    private func find(on host: HCIHost) async throws -> DiscoveredPeripheral {
        let target = options.target
        let address = BluetoothAddress(target)
        let matches: @Sendable (DiscoveredPeripheral) -> Bool = { peripheral in
            peripheral.isConnectable && (peripheral.address == address || peripheral.localName == target)
        }
        let seen: [DiscoveredPeripheral]
        do {
            seen = try await host.scan(for: options.scanTimeout, stopWhen: matches)
        } catch {
            throw SMPTransportError(
                .connectionFailed,
                "cannot scan through \(options.controller): \(error)",
                cause: error
            )
        }
        guard let found = seen.first(where: matches) else {
            let names = seen.compactMap(\.localName).sorted()
            throw SMPTransportError(
                .connectionFailed,
                "no connectable device named or addressed '\(target)' advertised within \(options.scanTimeout) through \(options.controller)"
                    + (names.isEmpty ? "" : " (seen: \(names.joined(separator: ", ")))")
            )
        }
        return found
    }

    private func describe(_ peripheral: DiscoveredPeripheral) -> String {
        "'\(options.target)' (\(peripheral.address))"
    }
}

extension HCIHost {
    /// Whether the controller is still there.
    var isUsable: Bool { endReason == nil }
}
