#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth
    import Foundation
    import SMPBytes
    import SMPLink

    /// Finds, connects, discovers and subscribes (or opens an L2CAP channel); then relays the
    /// peripheral's callbacks to the ``CoreBluetoothLink`` or ``L2CAPConnection`` it handed out.
    ///
    /// Safe because every stored property is read and written only on `queue`, the queue
    /// CoreBluetooth delivers the central's and the peripheral's delegate calls on: an `NSObject`
    /// delegate whose state lives on that queue, so the conformance is unchecked.
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
        /// The scan in progress: whom it looks for, and the SMP peripherals it has seen.
        private var search: PeripheralSearch?
        /// The peripherals the scan in progress has reported, by identifier.
        private var scanned: [UUID: CBPeripheral] = [:]
        /// `discoverServices` calls whose answer has not come: only the answer to the last one is
        /// read, since an earlier one may describe services invalidated since.
        private var pendingServiceDiscoveries = 0
        /// Rediscovering the SMP characteristic for the open link after the services changed.
        private var rediscovery = ServiceRediscovery()
        /// The characteristic a rediscovery found, until it is subscribed and handed to the link.
        private var rediscovered: CBCharacteristic?
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

        /// What a step and its cancellation handler share (used on `queue` only, behind a lock
        /// all the same, so the sharing is checked): the handler can run before the step is
        /// registered, and must then leave word for it.
        private struct StepCancellation {
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
                    central.pendingServiceDiscoveries = 0
                    central.discoverServices(on: peripheral)  // → didDiscoverServices → …Characteristics
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
                    rediscovery.cancel()
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
            // Before the first Bluetooth call: without the description the system kills the
            // process there, with nothing to report.
            try BluetoothUsageDescription.check(
                value: Bundle.main.object(forInfoDictionaryKey: BluetoothUsageDescription.key),
                hasInfoPlist: Bundle.main.bundleIdentifier != nil
            )
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
            let cancellation = Locked(StepCancellation())
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
                        let cancelledEarly = cancellation.withLock { cancellation in
                            cancellation.number = number
                            return cancellation.isCancelled
                        }
                        // Cancelled before it was registered: the handler found nothing to end.
                        guard !cancelledEarly else { return self.finishStep(CancellationError()) }
                        self.queue.asyncAfter(deadline: .now() + Self.seconds(timeout)) {
                            guard self.stepNumber == number else { return }
                            if kind == .connect { self.connectFailed() }
                            // A scan says what it saw (several SMP peripherals, none taken).
                            let message = kind == .scan ? self.search?.failureMessage ?? timeoutMessage : timeoutMessage
                            self.abortStep()
                            self.finishStep(SMPTransportError(.connectionFailed, message))
                        }
                        start(self)
                    }
                }
            } onCancel: {
                // E.g. an upgrade cancelled while it reconnects: do not wait out the step timeout.
                queue.async {
                    let registered = cancellation.withLock { cancellation in
                        cancellation.isCancelled = true
                        return cancellation.number
                    }
                    guard let number = registered, self.stepNumber == number else { return }
                    self.abortStep()
                    self.finishStep(CancellationError())
                }
            }
        }

        /// A duration as the seconds `DispatchTime` takes.
        private static func seconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        }

        /// Ends the step in progress (on `queue`), resuming its waiter exactly once.
        private func finishStep(_ error: (any Error)?) {
            guard let step else { return }
            self.step = nil
            if stepKind == .scan {
                search = nil
                scanned = [:]
            }
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
            pendingServiceDiscoveries = 0
            finishStep(nil)
        }

        /// Connecting to a retrieved peripheral failed (on `queue`): the next attempt scans (Apple:
        /// retrieve, and scan when connecting fails). Also for an identifier target: a device reset
        /// into a loader or recovery image may come back under another identifier, which only a
        /// scan (by the SMP service, see ``PeripheralSearch``) finds.
        private func connectFailed() {
            if peripheralWasRetrieved { preferScan = true }
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
            // A reconnect (this central connected before) also takes the only peripheral that
            // advertises the SMP service: a device reset into a loader or recovery image may come
            // back under another name and identifier.
            let search = PeripheralSearch(target: target, acceptsSMPService: connectionNumber > 0)
            self.search = search
            scanned = [:]
            // With a name, scan everything: many devices do not advertise the 128-bit SMP UUID.
            manager.scanForPeripherals(withServices: target.isEmpty ? [serviceUUID] : nil)
            guard search.acceptsSMPService else { return }
            let number = stepNumber
            queue.asyncAfter(
                deadline: .now() + Self.seconds(PeripheralSearch.settleDelay(scanTimeout: configuration.scanTimeout))
            ) {
                guard self.stepNumber == number, self.stepKind == .scan, let decision = self.search?.settled() else {
                    return
                }
                self.take(decision)
            }
        }

        /// Ends the scan with the peripheral the search chose (on `queue`).
        private func take(_ decision: PeripheralSearch.Decision) {
            guard case .connect(let identifier) = decision, let found = scanned[identifier] else { return }
            manager?.stopScan()
            peripheral = found
            finishStep(.scan, nil)
        }

        private func matches(_ peripheral: CBPeripheral, advertisedName: String?) -> Bool {
            PeripheralSearch(target: target, acceptsSMPService: false)
                .matchesTarget(identifier: peripheral.identifier, name: peripheral.name, advertisedName: advertisedName)
        }

        /// Ends the open link and L2CAP connection (on `queue`); with `peripheral`, only those on it.
        private func endUsers(_ error: SMPTransportError, on peripheral: CBPeripheral? = nil) {
            if let link, peripheral == nil || link.peripheral === peripheral {
                link.end(error)
                self.link = nil
                rediscovery.cancel()
                rediscovered = nil
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
            pendingServiceDiscoveries = 0
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
            guard stepKind == .scan, search != nil else { return }
            let services = advertisementData[CBAdvertisementDataServiceUUIDsKey] as? [CBUUID] ?? []
            scanned[peripheral.identifier] = peripheral
            let decision = search?.discovered(
                PeripheralSearch.Advertisement(
                    identifier: peripheral.identifier,
                    name: peripheral.name,
                    advertisedName: advertisementData[CBAdvertisementDataLocalNameKey] as? String,
                    advertisesSMPService: services.contains(serviceUUID)
                )
            )
            if let decision { take(decision) }
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
            pendingServiceDiscoveries = 0
            let lost = SMPTransportError(.disconnected, "'\(target)' disconnected", cause: error)
            endUsers(lost)
            if stepKind?.needsConnection == true { finishStep(lost) }
        }

        // MARK: - CBPeripheralDelegate

        /// Asks for the SMP service (on `queue`); only the answer to the last such call is read.
        private func discoverServices(on peripheral: CBPeripheral) {
            pendingServiceDiscoveries += 1
            peripheral.discoverServices([serviceUUID])
        }

        /// The SMP characteristic in `service`, if it can carry SMP (write without response, notify).
        private func usableCharacteristic(in service: CBService) -> CBCharacteristic? {
            guard let found = service.characteristics?.first(where: { $0.uuid == characteristicUUID }),
                found.properties.contains(.notify), found.properties.contains(.writeWithoutResponse)
            else { return nil }
            return found
        }

        /// The open link on `peripheral`, if it is being rediscovered (on `queue`).
        private func rediscoveringLink(on peripheral: CBPeripheral) -> CoreBluetoothLink? {
            guard rediscovery.isPaused, let link, link.peripheral === peripheral else { return nil }
            return link
        }

        func peripheral(_ peripheral: CBPeripheral, didModifyServices invalidatedServices: [CBService]) {
            // Apple: the invalidated services can no longer be used; discoverServices finds
            // whether they came back. Only the SMP service matters here.
            guard invalidatedServices.contains(where: { $0.uuid == serviceUUID }) else { return }
            switch stepKind {
            case .discover:
                // Connecting: discover again; the answer to the discovery under way is ignored.
                characteristic = nil
                discoverServices(on: peripheral)
            case .subscribe:
                finishStep(
                    SMPTransportError(.connectionFailed, "'\(target)' changed its services while connecting; try again")
                )
            default:
                guard let link, link.peripheral === peripheral else { return }
                performRediscovery(rediscovery.servicesModified(invalidatesSMP: true), on: peripheral)
            }
        }

        func peripheral(_ peripheral: CBPeripheral, didDiscoverServices error: (any Error)?) {
            pendingServiceDiscoveries = max(0, pendingServiceDiscoveries - 1)
            guard pendingServiceDiscoveries == 0 else { return }  // a later discovery's answer is coming
            let service = peripheral.services?.first(where: { $0.uuid == serviceUUID })
            if stepKind == .discover {
                guard let service else {
                    finishStep(SMPTransportError(.connectionFailed, "'\(target)' has no SMP service", cause: error))
                    return
                }
                peripheral.discoverCharacteristics([characteristicUUID], for: service)
                return
            }
            guard rediscoveringLink(on: peripheral) != nil else { return }
            let action = rediscovery.servicesDiscovered(smpServiceFound: service != nil, failed: error != nil)
            if action == .discoverCharacteristic, let service {
                peripheral.discoverCharacteristics([characteristicUUID], for: service)
            } else {
                performRediscovery(action, on: peripheral)
            }
        }

        func peripheral(
            _ peripheral: CBPeripheral,
            didDiscoverCharacteristicsFor service: CBService,
            error: (any Error)?
        ) {
            // The services were invalidated since this discovery began: a newer one is under way.
            guard pendingServiceDiscoveries == 0 else { return }
            let found = usableCharacteristic(in: service)
            if stepKind == .discover {
                guard let found else {
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
                return
            }
            guard rediscoveringLink(on: peripheral) != nil else { return }
            let action = rediscovery.characteristicDiscovered(usable: found != nil)
            if action == .subscribe, let found {
                rediscovered = found
                peripheral.setNotifyValue(true, for: found)  // → didUpdateNotificationState
            } else {
                performRediscovery(action, on: peripheral)
            }
        }

        func peripheral(
            _ peripheral: CBPeripheral,
            didUpdateNotificationStateFor characteristic: CBCharacteristic,
            error: (any Error)?
        ) {
            guard characteristic.uuid == characteristicUUID else { return }
            if stepKind != .subscribe, rediscoveringLink(on: peripheral) != nil, characteristic === rediscovered {
                let action = rediscovery.notificationStateUpdated(
                    notifying: characteristic.isNotifying,
                    failed: error != nil
                )
                performRediscovery(action, on: peripheral)
                return
            }
            if let error {
                finishStep(
                    .subscribe,
                    SMPTransportError(.connectionFailed, "could not subscribe (pairing needed?)", cause: error)
                )
            } else if characteristic.isNotifying {
                finishStep(.subscribe, nil)
            }
        }

        /// Carries out what the rediscovery decided that needs no delegate argument (on `queue`).
        private func performRediscovery(_ action: ServiceRediscovery.Action, on peripheral: CBPeripheral) {
            switch action {
            case .none, .discoverCharacteristic, .subscribe:
                break  // handled where the service or characteristic is at hand
            case .discoverServices(let attempt):
                link?.pause()
                rediscovered = nil
                discoverServices(on: peripheral)
                queue.asyncAfter(deadline: .now() + Self.seconds(configuration.stepTimeout)) {
                    guard let peripheral = self.link?.peripheral else { return }
                    self.performRediscovery(self.rediscovery.timedOut(attempt: attempt), on: peripheral)
                }
            case .resume:
                guard let link, let found = rediscovered else { return }
                characteristic = found
                rediscovered = nil
                link.resume(with: found)
            case .end(let reason):
                rediscovered = nil
                guard let link, link.peripheral === peripheral else { return }
                // Nothing else uses the connection (a new link or channel replaces the old one),
                // and a device without SMP is of no use to it: give the connection up too.
                link.end(SMPTransportError(.disconnected, "'\(target)': \(reason)"))
                self.link = nil
                cancel(peripheral)
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
