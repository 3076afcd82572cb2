#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth
    import Foundation
    import SMPLink

    /// Finds, connects, discovers and subscribes (or opens an L2CAP channel); then relays the
    /// peripheral's callbacks to the ``CoreBluetoothLink`` or ``L2CAPConnection`` it handed out.
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
        /// `peripheral` came from `retrievePeripherals(withIdentifiers:)`, not from a scan.
        private var peripheralWasRetrieved = false
        /// Connecting to a retrieved peripheral failed: the next attempt scans instead (until one
        /// connects), since a device that came back under a new identifier is still "retrieved"
        /// under its old one, and a connect to it never completes.
        private var preferScan = false
        private var characteristic: CBCharacteristic?
        /// The open GATT link handed out last; forgotten when it ends.
        private var link: CoreBluetoothLink?
        /// The open L2CAP connection handed out last; weak, so one released without `close()` goes.
        private weak var l2cap: L2CAPConnection?
        private var channel: CBL2CAPChannel?
        /// Counts the connections made (one per attempt that got past connecting), so a connection
        /// handed out earlier can tell whether the LE connection is still its own to cancel.
        private var connectionNumber = 0
        /// A connection attempt (``connect(to:)``, ``openChannel(to:psm:maximumFrameSize:)``) is
        /// running: a second one is refused, not interleaved with it step by step.
        private var attempting = false
        /// The step in progress and its number, so a late timeout cannot end a later step.
        private var step: CheckedContinuation<Void, any Error>?
        /// What the step in progress waits for: only that delegate call ends it.
        private var stepKind: Step?
        private var stepNumber = 0

        /// The steps of connecting, each ended by its own delegate call.
        private enum Step {
            case powerOn, scan, connect, discover, subscribe, openChannel

            /// Steps that need the peripheral connected, so a disconnection fails them.
            var needsConnection: Bool { self != .powerOn && self != .scan }
        }

        /// What a step and its cancellation handler share (used on `queue` only): the handler can
        /// run before the step is registered, and must then leave word for it.
        private final class StepCancellation: @unchecked Sendable {
            var isCancelled = false
            var number: Int?
        }

        init(configuration: CoreBluetoothConfiguration) {
            self.configuration = configuration
        }

        // Created on first use, which is always after the attempt's `validateUUIDs()`:
        // `CBUUID(string:)` raises an uncatchable exception on a malformed string.
        private lazy var serviceUUID = CBUUID(string: configuration.serviceUUID)
        private lazy var characteristicUUID = CBUUID(string: configuration.characteristicUUID)

        // MARK: - Connecting

        func connect(to target: String) async throws -> any GATTLink {
            try await attempt(target) {
                try await run(.discover, timeout: configuration.stepTimeout, "no SMP characteristic on '\(target)'") {
                    central in
                    central.characteristic = nil
                    guard let peripheral = central.connectedPeripheral else { return central.failLostConnection() }
                    peripheral.discoverServices([central.serviceUUID])  // → didDiscoverServices → …Characteristics
                }
                // The link is handed out only once notifications are on: a response to the first
                // request must not arrive before the subscription.
                try await run(.subscribe, timeout: configuration.stepTimeout, "could not subscribe to '\(target)'") {
                    central in
                    guard let peripheral = central.connectedPeripheral, let characteristic = central.characteristic
                    else { return central.failLostConnection() }
                    peripheral.setNotifyValue(true, for: characteristic)  // → didUpdateNotificationState
                }
                return try queue.sync {
                    guard let peripheral = connectedPeripheral, let characteristic else {
                        throw SMPTransportError(.connectionFailed, "the peripheral went away while connecting")
                    }
                    // An older link or channel on this central shares the peripheral: end it, or its
                    // later disconnect() would cancel the connection the new link uses.
                    endUsers(SMPTransportError(.disconnected, "replaced by a new connection"))
                    let opened = CoreBluetoothLink(
                        central: self,
                        peripheral: peripheral,
                        characteristic: characteristic
                    )
                    link = opened
                    return opened
                }
            }
        }

        /// Finds and connects the peripheral, then opens an L2CAP channel on it by PSM.
        func openChannel(to target: String, psm: UInt16, maximumFrameSize: Int) async throws -> L2CAPConnection {
            try await attempt(target) {
                try await run(.openChannel, timeout: configuration.stepTimeout, "could not open L2CAP channel \(psm)") {
                    central in
                    central.channel = nil
                    guard let peripheral = central.connectedPeripheral else { return central.failLostConnection() }
                    peripheral.openL2CAPChannel(CBL2CAPPSM(psm))  // → didOpen
                }
                return try queue.sync {
                    // Handed over: the connection keeps the channel (and so its streams) alive.
                    defer { channel = nil }
                    guard let channel, let peripheral = connectedPeripheral else {
                        throw SMPTransportError(.connectionFailed, "the L2CAP channel closed at once")
                    }
                    endUsers(SMPTransportError(.disconnected, "replaced by a new connection"))
                    let opened = L2CAPConnection(
                        channel: channel,
                        central: self,
                        peripheral: peripheral,
                        connection: connectionNumber,
                        maximumFrameSize: maximumFrameSize
                    )
                    l2cap = opened
                    return opened
                }
            }
        }

        /// One connection attempt: validates the UUIDs, refuses to run beside another attempt,
        /// connects the peripheral, then runs `complete`. When `complete` fails, the connection it
        /// was given is cancelled: left up, the device stays connected to this app (and stops
        /// advertising), and the next attempt's connect would wait for a `didConnect` that never
        /// comes.
        private func attempt<Result>(
            _ target: String,
            _ complete: () async throws -> Result
        ) async throws -> Result {
            try configuration.validateUUIDs()
            try queue.sync {
                guard !attempting else {
                    throw SMPTransportError(.connectionFailed, "another connection attempt is in progress")
                }
                attempting = true
            }
            defer { queue.sync { attempting = false } }
            try await connectPeripheral(to: target)
            do {
                return try await complete()
            } catch {
                queue.sync { abandonConnection(error) }
                throw error
            }
        }

        /// Powers on, finds and connects the peripheral; remembers its identifier for reconnecting.
        private func connectPeripheral(to target: String) async throws {
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
                guard let manager = central.manager, let peripheral = central.peripheral else {
                    return central.finishStep(
                        SMPTransportError(.disconnected, "'\(target)' went away before connecting")
                    )
                }
                peripheral.delegate = central
                // `state` is this app's connection. Already connected (e.g. a link still open on
                // this central): connect would not call didConnect again, so the step ends here.
                guard peripheral.state != .connected else { return central.didConnect() }
                // Also when the system already holds a connection: this app needs its own.
                manager.connect(peripheral)  // → didConnect / didFailToConnect
            }
        }

        /// Runs one step on the queue and waits until its delegate call (or the timeout, or the
        /// task's cancellation) ends it. The waiter is resumed exactly once, by ``finishStep(_:)``
        /// or by the refusal of a second step.
        private func run(
            _ kind: Step,
            timeout: Duration,
            _ timeoutMessage: String,
            _ start: @escaping @Sendable (CoreBluetoothCentral) -> Void
        ) async throws {
            let cancellation = StepCancellation()
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    queue.async {
                        guard self.step == nil else {
                            // Never drop a waiter (the attempt guard makes this unreachable).
                            continuation.resume(
                                throwing: SMPTransportError(
                                    .connectionFailed,
                                    "another connection attempt is in progress"
                                )
                            )
                            return
                        }
                        self.stepNumber += 1
                        let number = self.stepNumber
                        self.step = continuation
                        self.stepKind = kind
                        cancellation.number = number
                        // Cancelled before it was registered: the handler found nothing to end.
                        guard !cancellation.isCancelled else { return self.finishStep(CancellationError()) }
                        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                        self.queue.asyncAfter(deadline: .now() + seconds) {
                            guard self.stepNumber == number else { return }
                            if kind == .connect { self.connectFailed() }
                            self.abortStep()
                            self.finishStep(SMPTransportError(.connectionFailed, timeoutMessage))
                        }
                        start(self)
                    }
                }
            } onCancel: {
                // E.g. an upgrade cancelled while it reconnects: do not wait out the step timeout.
                queue.async {
                    cancellation.isCancelled = true
                    guard let number = cancellation.number, self.stepNumber == number else { return }
                    self.abortStep()
                    self.finishStep(CancellationError())
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

        /// Fails the step at once when its start finds no connected peripheral (on `queue`):
        /// waiting out the timeout would end it later, and with a misleading message.
        private func failLostConnection() {
            finishStep(SMPTransportError(.disconnected, "'\(target)' disconnected while connecting"))
        }

        /// Stops what a step that is given up may have left running (on `queue`): a scan, or a
        /// connect to a peripheral out of range, which never times out by itself.
        private func abortStep() {
            manager?.stopScan()
            if let peripheral, peripheral.state == .connecting { cancel(peripheral) }
        }

        /// The connect step succeeded (on `queue`). The connection number changes in the same turn
        /// of the queue, so an older L2CAP connection closing later leaves this connection alone.
        private func didConnect() {
            guard stepKind == .connect, let peripheral else { return }
            connectionNumber += 1
            knownIdentifier = peripheral.identifier
            preferScan = false
            finishStep(nil)
        }

        /// Connecting to a retrieved peripheral failed (on `queue`): with a name to look for, the
        /// next attempt scans (Apple: retrieve, and scan when connecting fails).
        private func connectFailed() {
            if peripheralWasRetrieved, !target.isEmpty, UUID(uuidString: target) == nil { preferScan = true }
        }

        /// The peripheral, if this app is connected to it (on `queue`).
        private var connectedPeripheral: CBPeripheral? {
            guard let peripheral, peripheral.state == .connected else { return nil }
            return peripheral
        }

        private func findPeripheral() {
            guard let manager else {
                return finishStep(SMPTransportError(.unavailable, "Bluetooth is not available"))
            }
            // retrievePeripherals also returns a known peripheral that is absent; see `preferScan`.
            if !preferScan, let identifier = knownIdentifier,
                let known = manager.retrievePeripherals(withIdentifiers: [identifier]).first
            {
                peripheral = known
                peripheralWasRetrieved = true
                finishStep(nil)
                return
            }
            peripheralWasRetrieved = false
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

        /// Ends the open link and L2CAP connection (on `queue`); with `peripheral`, only those on it.
        private func endUsers(_ error: SMPTransportError, on peripheral: CBPeripheral? = nil) {
            if let link, peripheral == nil || link.peripheral === peripheral {
                link.end(error)
                self.link = nil
            }
            if let l2cap, peripheral == nil || l2cap.peripheral === peripheral {
                l2cap.linkLost(error)
                self.l2cap = nil
            }
        }

        /// After an attempt failed past connecting (on `queue`): cancels the connection it made or
        /// reused. A link or L2CAP connection still open on that peripheral shares the connection,
        /// so it ends too (as a successful attempt would have replaced it): the cancel's
        /// `didDisconnectPeripheral` comes without an error and ends nothing.
        private func abandonConnection(_ error: any Error) {
            guard let peripheral, peripheral.state != .disconnected else { return }
            endUsers(SMPTransportError(.disconnected, "a new connection attempt failed", cause: error), on: peripheral)
            cancel(peripheral)
        }

        // MARK: - CBCentralManagerDelegate

        func centralManagerDidUpdateState(_ central: CBCentralManager) {
            let problem: SMPTransportError?
            switch central.state {
            case .poweredOn:
                finishStep(.powerOn, nil)
                return
            case .unauthorized:
                problem = SMPTransportError(
                    .unavailable,
                    "Bluetooth permission denied; allow it in System Settings (for a command-line tool: for the terminal app)"
                )
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
            endUsers(SMPTransportError(.disconnected, "Bluetooth became unavailable (\(central.state.rawValue))"))
            peripheral = nil
            characteristic = nil
            channel = nil
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
            didConnect()
        }

        func centralManager(_ central: CBCentralManager, didFailToConnect peripheral: CBPeripheral, error: (any Error)?)
        {
            guard stepKind == .connect else { return }
            connectFailed()
            finishStep(SMPTransportError(.connectionFailed, "could not connect to '\(target)'", cause: error))
        }

        func centralManager(
            _ central: CBCentralManager,
            didDisconnectPeripheral peripheral: CBPeripheral,
            error: (any Error)?
        ) {
            // Apple: the error is nil only when the disconnection came from
            // cancelPeripheralConnection, i.e. from this central, which ended whatever used the
            // connection (or gave up the step) when it cancelled. A new attempt may have begun
            // since: this late callback ends nothing.
            guard let error else { return }
            characteristic = nil
            let lost = SMPTransportError(.disconnected, "'\(target)' disconnected", cause: error)
            endUsers(lost)
            if stepKind?.needsConnection == true { finishStep(lost) }
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

        // MARK: - From the link and the L2CAP connection

        /// Cancels the connection (on `queue`). Its `didDisconnectPeripheral` comes without an
        /// error and ends nothing, so the caller ends what used the connection itself. Apple:
        /// cancelling also ends a pending connect, with a `didDisconnectPeripheral` as well.
        func cancel(_ peripheral: CBPeripheral) {
            guard let manager, manager.state == .poweredOn else { return }  // already gone
            manager.cancelPeripheralConnection(peripheral)
        }

        /// Drops the reference to a link that ended by `disconnect()` (on `queue`): the central and
        /// the link refer to each other, which would keep the manager alive.
        func forget(_ ended: CoreBluetoothLink) {
            if link === ended { link = nil }
        }

        /// An L2CAP connection closed (from any queue): cancels the LE connection under it, unless
        /// a later attempt has connected since and so owns the connection now.
        func releaseConnection(_ number: Int) {
            queue.async {
                guard number == self.connectionNumber, let peripheral = self.connectedPeripheral else { return }
                self.cancel(peripheral)
            }
        }
    }
#endif
