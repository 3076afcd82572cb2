#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth
    import Foundation
    import MCUmgr

    /// Where to find the SMP characteristic, and how long to look.
    public struct CoreBluetoothConfiguration: Sendable, Hashable {
        /// The SMP service UUID (Zephyr's by default; some products use their own).
        public var serviceUUID: String
        /// The SMP characteristic UUID.
        public var characteristicUUID: String
        /// How long to scan for the peripheral.
        public var scanTimeout: Duration
        /// How long each of connect, discover and subscribe may take.
        public var stepTimeout: Duration
        /// How often to look again at `canSendWriteWithoutResponse` when no ready callback comes.
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
    }

    extension GATTTransport {
        /// SMP over CoreBluetooth to a peripheral named `target`, or with that identifier (a UUID).
        ///
        /// The first connection scans (by name or identifier; with an empty name, the first
        /// peripheral advertising the SMP service); later ones, e.g. after a reset, retrieve the same
        /// peripheral by identifier. `ble://NAME` in the command line.
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

    /// Finds, connects, discovers and subscribes; then relays the peripheral's callbacks to the
    /// ``CoreBluetoothLink`` it opened.
    ///
    /// `@unchecked Sendable`: every stored property is read and written only on `queue`, the queue
    /// CoreBluetooth delivers the central's and the peripheral's delegate calls on.
    final class CoreBluetoothCentral: NSObject, CBCentralManagerDelegate, CBPeripheralDelegate, @unchecked Sendable {
        let configuration: CoreBluetoothConfiguration
        let queue = DispatchQueue(label: "mcumgr.ble.central")
        private var manager: CBCentralManager?
        private var target = ""
        private var knownIdentifier: UUID?
        private var peripheral: CBPeripheral?
        private var characteristic: CBCharacteristic?
        private var link: CoreBluetoothLink?
        private var channel: CBL2CAPChannel?
        /// The step in progress and its number, so a late timeout cannot end a later step.
        private var step: CheckedContinuation<Void, any Error>?
        /// What the step in progress waits for: only that delegate call ends it.
        private var stepKind: Step?
        private var stepNumber = 0
        /// Disconnections this central asked for (``cancel(_:)``) whose `didDisconnectPeripheral`
        /// has not come yet: that late callback must not fail a new connection attempt.
        private var pendingCancels = 0

        /// The steps of connecting, each ended by its own delegate call.
        private enum Step {
            case powerOn, scan, connect, discover, subscribe, openChannel

            /// Steps that need the peripheral connected, so a disconnection fails them.
            var needsConnection: Bool { self != .powerOn && self != .scan }
        }

        init(configuration: CoreBluetoothConfiguration) {
            self.configuration = configuration
        }

        private var serviceUUID: CBUUID { CBUUID(string: configuration.serviceUUID) }
        private var characteristicUUID: CBUUID { CBUUID(string: configuration.characteristicUUID) }

        // MARK: - Connecting

        func connect(to target: String) async throws -> any GATTLink {
            try await connectPeripheral(to: target)
            try await run(.discover, timeout: configuration.stepTimeout, "no SMP characteristic on '\(target)'") {
                central in
                central.characteristic = nil
                central.peripheral?.discoverServices([central.serviceUUID])  // → didDiscoverServices → …Characteristics
            }
            // The link is handed out only once notifications are on: a response to the first
            // request must not arrive before the subscription.
            try await run(.subscribe, timeout: configuration.stepTimeout, "could not subscribe to '\(target)'") {
                central in
                guard let peripheral = central.peripheral, let characteristic = central.characteristic else { return }
                peripheral.setNotifyValue(true, for: characteristic)  // → didUpdateNotificationState
            }
            return try queue.sync {
                guard let peripheral, let characteristic, peripheral.state == .connected else {
                    throw SMPTransportError(.connectionFailed, "the peripheral went away while connecting")
                }
                // A link still open on this central shares the peripheral: end it, or its later
                // disconnect() would cancel the connection the new link uses.
                link?.end(SMPTransportError(.disconnected, "replaced by a new connection"))
                let opened = CoreBluetoothLink(central: self, peripheral: peripheral, characteristic: characteristic)
                link = opened
                return opened
            }
        }

        /// Opens an L2CAP channel by PSM on the connected peripheral (after ``connectPeripheral(to:)``).
        func openChannel(psm: UInt16) async throws -> CBL2CAPChannel {
            try await run(.openChannel, timeout: configuration.stepTimeout, "could not open L2CAP channel \(psm)") {
                central in
                central.channel = nil
                central.peripheral?.openL2CAPChannel(CBL2CAPPSM(psm))  // → didOpen
            }
            return try queue.sync {
                // Handed over: the connection keeps the channel (and so its streams) alive.
                defer { channel = nil }
                guard let channel else {
                    throw SMPTransportError(.connectionFailed, "the L2CAP channel closed at once")
                }
                return channel
            }
        }

        /// Powers on, finds and connects the peripheral; remembers its identifier for reconnecting.
        func connectPeripheral(to target: String) async throws {
            try await run(.powerOn, timeout: configuration.stepTimeout, "Bluetooth is not powered on") { central in
                central.target = target
                if central.knownIdentifier == nil { central.knownIdentifier = UUID(uuidString: target) }
                if let manager = central.manager {
                    central.centralManagerDidUpdateState(manager)
                } else {
                    central.manager = CBCentralManager(delegate: central, queue: central.queue)  // → didUpdateState
                }
            }
            try await run(.scan, timeout: configuration.scanTimeout, "no peripheral '\(target)' found") { central in
                central.findPeripheral()
            }
            try await run(.connect, timeout: configuration.stepTimeout, "could not connect to '\(target)'") { central in
                guard let manager = central.manager, let peripheral = central.peripheral else { return }
                peripheral.delegate = central
                // Also when the system already holds a connection: this app needs its own.
                manager.connect(peripheral)  // → didConnect / didFailToConnect
            }
            queue.sync { knownIdentifier = peripheral?.identifier ?? knownIdentifier }
        }

        /// Runs one step on the queue and waits until its delegate call (or the timeout) ends it.
        private func run(
            _ kind: Step,
            timeout: Duration,
            _ timeoutMessage: String,
            _ start: @escaping @Sendable (CoreBluetoothCentral) -> Void
        ) async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                queue.async {
                    guard self.step == nil else {
                        // One connection attempt at a time per central; never drop a waiter.
                        continuation.resume(
                            throwing: SMPTransportError(.connectionFailed, "another connection attempt is in progress")
                        )
                        return
                    }
                    self.stepNumber += 1
                    let number = self.stepNumber
                    self.step = continuation
                    self.stepKind = kind
                    let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                    self.queue.asyncAfter(deadline: .now() + seconds) {
                        guard self.stepNumber == number else { return }
                        self.manager?.stopScan()
                        // A connect to a peripheral out of range never times out by itself.
                        if let peripheral = self.peripheral, peripheral.state == .connecting {
                            self.manager?.cancelPeripheralConnection(peripheral)
                        }
                        self.finishStep(SMPTransportError(.connectionFailed, timeoutMessage))
                    }
                    start(self)
                }
            }
        }

        /// Ends the step in progress (on `queue`), resuming its waiter exactly once.
        private func finishStep(_ error: (any Error)?) {
            guard let step else { return }
            self.step = nil
            stepKind = nil
            stepNumber += 1
            if let error { step.resume(throwing: error) } else { step.resume() }
        }

        /// Ends the step in progress only if it is waiting for `kind` (on `queue`): a late or
        /// unrelated delegate call must not end another step.
        private func finishStep(_ kind: Step, _ error: (any Error)?) {
            guard stepKind == kind else { return }
            finishStep(error)
        }

        private func findPeripheral() {
            guard let manager else { return }
            if let identifier = knownIdentifier,
                let known = manager.retrievePeripherals(withIdentifiers: [identifier]).first
            {
                peripheral = known
                finishStep(nil)
                return
            }
            if let connected = manager.retrieveConnectedPeripherals(withServices: [serviceUUID])
                .first(where: { matches($0, advertisedName: nil) })
            {
                peripheral = connected
                finishStep(nil)
                return
            }
            // With a name, scan everything: many devices do not advertise the 128-bit SMP UUID.
            manager.scanForPeripherals(withServices: target.isEmpty ? [serviceUUID] : nil)
        }

        private func matches(_ peripheral: CBPeripheral, advertisedName: String?) -> Bool {
            if target.isEmpty { return true }
            if peripheral.identifier.uuidString.caseInsensitiveCompare(target) == .orderedSame { return true }
            return peripheral.name == target || advertisedName == target
        }

        // MARK: - CBCentralManagerDelegate

        func centralManagerDidUpdateState(_ central: CBCentralManager) {
            let problem: SMPTransportError?
            switch central.state {
            case .poweredOn:
                finishStep(.powerOn, nil)
                return
            case .unauthorized:
                problem = SMPTransportError(.unavailable, "Bluetooth permission denied; allow it in System Settings")
            case .unsupported:
                problem = SMPTransportError(.unavailable, "this machine has no Bluetooth LE")
            case .poweredOff:
                problem = SMPTransportError(.unavailable, "Bluetooth is off")
            default:
                problem = nil  // unknown, resetting: the power-on step waits for the next update
            }
            // Below powered-on, CoreBluetooth has dropped every connection without calling
            // didDisconnectPeripheral, and (below powered-off) invalidated its CBPeripheral
            // objects: end the link, forget the objects, keep the identifier to retrieve it again.
            if let link {
                link.end(SMPTransportError(.disconnected, "Bluetooth became unavailable (\(central.state.rawValue))"))
                self.link = nil
            }
            peripheral = nil
            characteristic = nil
            channel = nil
            pendingCancels = 0
            if stepKind == .powerOn {
                if let problem { finishStep(problem) }
            } else {
                finishStep(problem ?? SMPTransportError(.disconnected, "Bluetooth was reset"))
            }
        }

        func centralManager(
            _ central: CBCentralManager,
            didDiscover peripheral: CBPeripheral,
            advertisementData: [String: Any],
            rssi: NSNumber
        ) {
            guard stepKind == .scan else { return }
            let name = advertisementData[CBAdvertisementDataLocalNameKey] as? String
            guard matches(peripheral, advertisedName: name) else { return }
            central.stopScan()
            self.peripheral = peripheral
            finishStep(.scan, nil)
        }

        func centralManager(_ central: CBCentralManager, didConnect peripheral: CBPeripheral) {
            finishStep(.connect, nil)
        }

        func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?)
        {
            finishStep(.connect, SMPTransportError(.connectionFailed, "could not connect to '\(target)'", cause: error))
        }

        func centralManager(
            _ central: CBCentralManager,
            didDisconnectPeripheral peripheral: CBPeripheral,
            error: (any Error)?
        ) {
            // The answer to our own cancel (error nil): the link it belonged to was ended when
            // the cancel was made, and a new connect() may have begun since; it ends nothing.
            if error == nil, pendingCancels > 0 {
                pendingCancels -= 1
                return
            }
            characteristic = nil
            link?.end(error.map { SMPTransportError(.disconnected, "'\(target)' disconnected", cause: $0) })
            link = nil
            if stepKind?.needsConnection == true {
                finishStep(SMPTransportError(.disconnected, "'\(target)' disconnected", cause: error))
            }
        }

        // MARK: - CBPeripheralDelegate

        func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {
            guard stepKind == .discover else { return }
            guard let service = peripheral.services?.first(where: { $0.uuid == serviceUUID }) else {
                finishStep(SMPTransportError(.connectionFailed, "'\(target)' has no SMP service", cause: error))
                return
            }
            peripheral.discoverCharacteristics([characteristicUUID], for: service)
        }

        func peripheral(
            _ peripheral: CBPeripheral,
            didDiscoverCharacteristicsFor service: CBService,
            error: (any Error)?
        ) {
            guard stepKind == .discover else { return }
            guard let found = service.characteristics?.first(where: { $0.uuid == characteristicUUID }),
                found.properties.contains(.notify), found.properties.contains(.writeWithoutResponse)
            else {
                finishStep(
                    SMPTransportError(
                        .connectionFailed,
                        "'\(target)' has no SMP characteristic with write-without-response and notify",
                        cause: error
                    )
                )
                return
            }
            characteristic = found
            finishStep(.discover, nil)
        }

        func peripheral(
            _ peripheral: CBPeripheral,
            didUpdateNotificationStateFor characteristic: CBCharacteristic,
            error: (any Error)?
        ) {
            guard characteristic.uuid == characteristicUUID else { return }
            if let error {
                finishStep(
                    .subscribe,
                    SMPTransportError(.connectionFailed, "could not subscribe (pairing needed?)", cause: error)
                )
            } else if characteristic.isNotifying {
                finishStep(.subscribe, nil)
            }
        }

        func peripheral(
            _ peripheral: CBPeripheral,
            didUpdateValueFor characteristic: CBCharacteristic,
            error: (any Error)?
        ) {
            // With an error, `value` is stale or absent: nothing to deliver.
            guard error == nil, characteristic.uuid == characteristicUUID, let value = characteristic.value else {
                return
            }
            link?.deliver(Array(value))
        }

        func peripheral(_ peripheral: CBPeripheral, didOpen channel: CBL2CAPChannel?, error: (any Error)?) {
            guard stepKind == .openChannel else { return }  // late: nobody waits for this channel
            if let channel, error == nil {
                self.channel = channel
                finishStep(nil)
            } else {
                finishStep(SMPTransportError(.connectionFailed, "could not open the L2CAP channel", cause: error))
            }
        }

        func peripheralIsReady(toSendWriteWithoutResponse peripheral: CBPeripheral) {
            link?.resumeWriters()
        }

        /// Cancels the connection (on `queue`); its `didDisconnectPeripheral` then ends nothing new.
        func cancel(_ peripheral: CBPeripheral) {
            guard let manager, manager.state == .poweredOn else { return }  // already gone
            pendingCancels += 1
            manager.cancelPeripheralConnection(peripheral)
        }

        /// Cancels the connection to the current peripheral, if any (L2CAP close).
        func cancelCurrentPeripheral() {
            queue.async {
                if let peripheral = self.peripheral, peripheral.state != .disconnected { self.cancel(peripheral) }
            }
        }
    }

    /// One connection to the SMP characteristic through CoreBluetooth.
    ///
    /// `@unchecked Sendable`: the mutable state (`waiters`, `isOpen`) is touched only on the
    /// central's queue, where CoreBluetooth also calls back.
    final class CoreBluetoothLink: GATTLink, @unchecked Sendable {
        let events: AsyncStream<GATTLinkEvent>
        private let continuation: AsyncStream<GATTLinkEvent>.Continuation
        private let central: CoreBluetoothCentral
        private let peripheral: CBPeripheral
        private let characteristic: CBCharacteristic
        private var waiters: [Int: CheckedContinuation<Void, any Error>] = [:]
        private var nextWaiter = 0
        private var isOpen = true

        init(central: CoreBluetoothCentral, peripheral: CBPeripheral, characteristic: CBCharacteristic) {
            self.central = central
            self.peripheral = peripheral
            self.characteristic = characteristic
            (events, continuation) = AsyncStream.makeStream(of: GATTLinkEvent.self)
        }

        /// Read from CoreBluetooth each time: it is only right once connected, and can grow.
        var maximumWriteLength: Int {
            central.queue.sync { peripheral.maximumWriteValueLength(for: .withoutResponse) }
        }

        func writeWithoutResponse(_ value: [UInt8]) async throws -> Bool {
            try central.queue.sync {
                guard isOpen, peripheral.state == .connected else {
                    throw SMPTransportError(.disconnected, "the peripheral is not connected")
                }
                guard peripheral.canSendWriteWithoutResponse else { return false }
                peripheral.writeValue(Data(value), for: characteristic, type: .withoutResponse)
                return true
            }
        }

        /// Waits for `peripheralIsReady(toSendWriteWithoutResponse:)`, or at most one poll interval
        /// (the callback is known to go missing); the core then asks again. Never a failure.
        func waitUntilReadyForWrite() async throws {
            let interval = central.configuration.readyPollInterval
            let seconds = Double(interval.components.seconds) + Double(interval.components.attoseconds) / 1e18
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                central.queue.async {
                    guard self.isOpen else {
                        continuation.resume(throwing: SMPTransportError(.disconnected, "the peripheral disconnected"))
                        return
                    }
                    let id = self.nextWaiter
                    self.nextWaiter += 1
                    self.waiters[id] = continuation
                    self.central.queue.asyncAfter(deadline: .now() + seconds) {
                        self.waiters.removeValue(forKey: id)?.resume()
                    }
                }
            }
        }

        /// Cancels the connection and ends the link at once (`events` yields `.disconnected(nil)`
        /// and finishes), without waiting for `didDisconnectPeripheral`, which does not come when
        /// Bluetooth is off meanwhile.
        func disconnect() async {
            central.queue.sync {
                guard isOpen else { return }
                central.cancel(peripheral)
                end(nil)
            }
        }

        // MARK: - From the central (on its queue)

        func deliver(_ value: [UInt8]) {
            continuation.yield(.notification(value))
        }

        func resumeWriters() {
            let ready = waiters
            waiters.removeAll()
            for waiter in ready.values { waiter.resume() }
        }

        func end(_ error: SMPTransportError?) {
            guard isOpen else { return }
            isOpen = false
            let ready = waiters
            waiters.removeAll()
            for waiter in ready.values {
                waiter.resume(throwing: SMPTransportError(.disconnected, "the peripheral disconnected"))
            }
            continuation.yield(.disconnected(error))
            continuation.finish()
        }
    }
#endif
