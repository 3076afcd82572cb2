import Logging
import SMPBytes
import SMPCore
import SMPHCI
import SMPHCIHost

/// The simulated device as a Bluetooth LE peripheral through our own LE host on an HCI controller
/// (`mcumgr simulator --ble NAME --hci tcp://…`): it advertises the SMP service under `name`,
/// serves GATT (the SMP characteristic, its CCCD, the GAP name) and hands every frame a central
/// writes to the device, notifying its answers within the controller's buffers — the peripheral
/// that independent centrals (smpclient over Bumble, nRF Connect through a dongle) test.
///
/// One central at a time, as a Zephyr device with one connection; when it goes (or the device
/// resets and drops it) the peripheral advertises again.
public actor SimulatedHCIPeripheral {
    /// The device served.
    public nonisolated let device: SimulatedDevice
    /// The advertised name.
    public nonisolated let name: String
    /// The controller.
    public nonisolated let controller: HCIControllerAddress
    /// How many centrals have connected so far.
    public private(set) var connectionCount = 0
    private let logger: Logger
    private var host: HCIHost?
    private var serving: Task<Void, Never>?

    /// Creates a peripheral; nothing is opened until `start()`.
    /// - Parameters:
    ///   - device: the device to serve.
    ///   - name: the name to advertise.
    ///   - controller: the controller to advertise through.
    ///   - logger: the logger.
    public init(
        device: SimulatedDevice,
        name: String,
        controller: HCIControllerAddress,
        logger: Logger = Logger(label: "mcumgr.simulator.hci")
    ) {
        self.device = device
        self.name = name
        self.controller = controller
        self.logger = logger
    }

    /// Brings the controller up and starts advertising.
    /// - Throws: `SystemCallError` or `HCIError` when the controller cannot be used, `HCIError`
    ///   `.malformedAdvertisingData` for a name that cannot be advertised.
    public func start() async throws {
        guard host == nil else { return }
        var generator = SystemRandomNumberGenerator()
        let opened = try await HCIHost.open(controller, randomAddress: .randomStatic(using: &generator), logger: logger)
        do {
            // A name that cannot be advertised fails the start, not a later loop.
            _ = try LEAdvertiser(name: name, service: .smpService, controller: opened.controller)
        } catch {
            await opened.close()
            throw error
        }
        host = opened
        serving = Task { await self.serve(opened) }
    }

    /// Stops advertising and serving; the controller is closed (a connected central sees the link
    /// end).
    public func stop() async {
        serving?.cancel()
        serving = nil
        await host?.close()
        host = nil
    }

    /// Whether the controller is gone (the peripheral then serves no more).
    public var hasEnded: Bool { serving == nil }

    private func serve(_ host: HCIHost) async {
        while !Task.isCancelled {
            let connection: HCIConnection
            do {
                connection = try await host.advertise(name: name, service: .smpService)
            } catch {
                logger.info("no more advertising", metadata: ["error": "\(error)"])
                break
            }
            connectionCount += 1
            logger.info("central connected", metadata: ["peer": "\(connection.peer)"])
            await HCIPeripheralSession(connection: connection, device: device, name: name, logger: logger).run()
        }
        serving = nil
    }
}
