#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth
    import Foundation
    import SMPBytes
    import SMPLink
    import SMPCore

    /// Serves a ``SimulatedDevice`` as a real Bluetooth LE peripheral through `CBPeripheralManager`
    /// (macOS, iOS), so phone apps (nRF Connect Device Manager) and other hosts can update it: the
    /// SMP service and characteristic, advertised under `name`. Only SMP: CoreBluetooth refuses
    /// Device Information and Battery for an app's peripheral (``CoreBluetoothPeripheralServices``).
    ///
    /// tvOS, watchOS and visionOS offer no peripheral role (Apple marks the initializers of
    /// `CBPeripheralManager`, `CBMutableService` and `CBMutableCharacteristic` unavailable there):
    /// the type exists so that callers compile, and ``start()`` throws `.unavailable`.
    ///
    /// Writes are reassembled by header length (as `MCUMGR_TRANSPORT_BT_REASSEMBLY` does), handled
    /// one at a time in arrival order, and answered by notifications of at most the central's
    /// `maximumUpdateValueLength`; a full notification queue waits for
    /// `peripheralManagerIsReady(toUpdateSubscribers:)`.
    ///
    /// Safe because all mutable state is used only on `queue`, where the manager calls back: an
    /// `NSObject` delegate whose state lives on that queue, so the conformance is unchecked.
    public final class SimulatedPeripheralServer: NSObject, CBPeripheralManagerDelegate, @unchecked Sendable {
        /// The device served.
        public let device: SimulatedDevice
        /// The advertised local name.
        public let name: String
        private let queue = DispatchQueue(label: "mcumgr.ble.peripheral")
        private var manager: CBPeripheralManager?
        private var started: CheckedContinuation<Void, any Error>?
        /// The SMP characteristic, made when the services are published (its initializer exists only
        /// where the peripheral role does).
        private var smp: CBMutableCharacteristic?
        private let smpUUID = CBUUID(string: SMPGATT.characteristicUUID)
        private var decoders: [UUID: SMPStreamDecoder] = [:]
        private var centrals: [UUID: CBCentral] = [:]
        private var outgoing: [(value: Data, central: CBCentral)] = []
        private let requests: AsyncStream<(frame: [UInt8], central: UUID)>.Continuation
        private let worker: Task<Void, Never>

        /// Creates a server; nothing is advertised until ``start()``.
        /// - Parameters:
        ///   - device: the device.
        ///   - name: the advertised name.
        public init(device: SimulatedDevice, name: String = "Zephyr") {
            self.device = device
            self.name = name
            let (stream, continuation) = AsyncStream.makeStream(of: (frame: [UInt8], central: UUID).self)
            requests = continuation
            // Each frame takes a buffer of the device's pool (or is lost); the device's work queue
            // answers one at a time, in arrival order, as Zephyr's does.
            let box = Locked(WeakServer())
            worker = Task {
                for await request in stream {
                    let central = request.central
                    await device.receive(request.frame) { delivery in
                        box.withLock { $0.server }?.answer(delivery.responses.map(\.frame), to: central)
                    }
                }
            }
            super.init()
            box.withLock { $0.server = self }
        }

        deinit {
            worker.cancel()
            requests.finish()
        }

        /// Powers on, publishes the SMP service and advertises it and the name.
        /// - Throws: ``SMPTransportError`` `.unavailable` when Bluetooth is off or not allowed, when
        ///   the process has no Bluetooth usage description (the system would end it), or on tvOS,
        ///   watchOS and visionOS, which have no peripheral role.
        public func start() async throws {
            #if os(tvOS) || os(watchOS) || os(visionOS)
                throw SMPTransportError(
                    .unavailable,
                    "this platform cannot act as a Bluetooth peripheral (CoreBluetooth offers that on macOS and iOS)"
                )
            #else
                // Before the first Bluetooth call: without the description the system kills the
                // process there, with nothing to report.
                try BluetoothUsageDescription.check(
                    value: Bundle.main.object(forInfoDictionaryKey: BluetoothUsageDescription.key),
                    hasInfoPlist: Bundle.main.bundleIdentifier != nil
                )
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    queue.async {
                        guard self.manager == nil, self.started == nil else {
                            continuation.resume(
                                throwing: SMPTransportError(.unavailable, "the server was already started")
                            )
                            return
                        }
                        self.started = continuation
                        self.manager = CBPeripheralManager(delegate: self, queue: self.queue)  // → didUpdateState
                    }
                }
            #endif
        }

        /// Stops advertising and removes the services.
        public func stop() {
            queue.sync {
                manager?.stopAdvertising()
                manager?.removeAllServices()
                forgetCentrals()
            }
        }

        // MARK: - CBPeripheralManagerDelegate (on `queue`)

        public func peripheralManagerDidUpdateState(_ peripheral: CBPeripheralManager) {
            switch peripheral.state {
            case .poweredOn:
                publish(peripheral)  // also after Bluetooth comes back: services and advertising are gone
            case .unauthorized, .unsupported, .poweredOff:
                forgetCentrals()
                started?.resume(throwing: SMPTransportError(.unavailable, "Bluetooth is not available for advertising"))
                started = nil
            default:
                forgetCentrals()  // resetting: connections are gone
            }
        }

        public func peripheralManager(_ peripheral: CBPeripheralManager, didAdd service: CBService, error: (any Error)?)
        {
            if let error {
                started?.resume(
                    throwing: SMPTransportError(
                        .unavailable,
                        "could not add service \(service.uuid.uuidString)",
                        cause: error
                    )
                )
                started = nil
            }
        }

        public func peripheralManagerDidStartAdvertising(_ peripheral: CBPeripheralManager, error: (any Error)?) {
            if let error {
                started?.resume(throwing: SMPTransportError(.unavailable, "could not advertise", cause: error))
            } else {
                started?.resume()
            }
            started = nil
        }

        /// Answers exactly once per call, with the first request, as CoreBluetooth requires; if
        /// any request cannot be honoured none is (only whole writes to the SMP characteristic).
        public func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveWrite requests: [CBATTRequest]) {
            guard let first = requests.first else { return }
            if let refused = requests.first(where: { $0.characteristic.uuid != smpUUID || $0.offset != 0 }) {
                peripheral.respond(
                    to: first,
                    withResult: refused.characteristic.uuid != smpUUID ? .writeNotPermitted : .invalidOffset
                )
                return
            }
            for request in requests {
                guard let value = request.value else { continue }
                centrals[request.central.identifier] = request.central
                var decoder = decoders[request.central.identifier] ?? SMPStreamDecoder()
                for case .frame(let frame) in decoder.feed(Array(value)) {
                    self.requests.yield((frame, request.central.identifier))
                }
                decoders[request.central.identifier] = decoder
            }
            peripheral.respond(to: first, withResult: .success)
        }

        /// The SMP characteristic is not readable (and is the only one published). Answered exactly
        /// once.
        public func peripheralManager(_ peripheral: CBPeripheralManager, didReceiveRead request: CBATTRequest) {
            peripheral.respond(to: request, withResult: .readNotPermitted)
        }

        /// A (re)subscribing central starts clean: one that reconnects under the same identifier
        /// without an unsubscribe first (a dropped link) must not inherit its old partial request
        /// or the rest of an old answer, which would arrive mid-frame.
        public func peripheralManager(
            _ peripheral: CBPeripheralManager,
            central: CBCentral,
            didSubscribeTo characteristic: CBCharacteristic
        ) {
            guard characteristic.uuid == smpUUID else { return }
            decoders[central.identifier] = nil
            centrals[central.identifier] = central
            outgoing.removeAll { $0.central.identifier == central.identifier }
            drain()
        }

        public func peripheralManager(
            _ peripheral: CBPeripheralManager,
            central: CBCentral,
            didUnsubscribeFrom characteristic: CBCharacteristic
        ) {
            decoders[central.identifier] = nil
            centrals[central.identifier] = nil
            // Its queued notifications would never go out and would hold up everyone else's.
            outgoing.removeAll { $0.central.identifier == central.identifier }
            drain()
        }

        public func peripheralManagerIsReady(toUpdateSubscribers peripheral: CBPeripheralManager) {
            drain()
        }

        // MARK: - Private

        private func publish(_ manager: CBPeripheralManager) {
            #if !os(tvOS) && !os(watchOS) && !os(visionOS)
                // After Bluetooth is switched off and on, services added before may linger: adding
                // them again would publish duplicates.
                manager.removeAllServices()
                let characteristic =
                    smp
                    ?? CBMutableCharacteristic(
                        type: smpUUID,
                        properties: [.writeWithoutResponse, .notify],
                        value: nil,
                        permissions: [.writeable]
                    )
                smp = characteristic
                for uuid in CoreBluetoothPeripheralServices.published {
                    let service = CBMutableService(type: CBUUID(string: uuid), primary: true)
                    if uuid == SMPGATT.serviceUUID { service.characteristics = [characteristic] }
                    manager.add(service)
                }
                manager.startAdvertising([
                    CBAdvertisementDataLocalNameKey: name,
                    CBAdvertisementDataServiceUUIDsKey: [CBUUID(string: SMPGATT.serviceUUID)],
                ])
            #endif
        }

        /// Forgets connected centrals and their partial requests and queued answers (on `queue`).
        private func forgetCentrals() {
            decoders.removeAll()
            centrals.removeAll()
            outgoing.removeAll()
        }

        /// Called by the worker with the device's answers.
        fileprivate func answer(_ frames: [[UInt8]], to identifier: UUID) {
            queue.async {
                guard let central = self.centrals[identifier] else { return }  // it went away
                let size = max(20, central.maximumUpdateValueLength)
                for frame in frames {
                    for fragment in BLEFragmentation.fragments(of: frame, maximumWriteLength: size) {
                        self.outgoing.append((Data(fragment), central))
                    }
                }
                self.drain()
            }
        }

        /// Sends queued notifications until the manager's queue is full (on `queue`).
        private func drain() {
            guard let manager, let smp else { return }
            while let next = outgoing.first {
                guard manager.updateValue(next.value, for: smp, onSubscribedCentrals: [next.central]) else { return }
                outgoing.removeFirst()
            }
        }
    }

    /// Lets the worker task reach the server without keeping it alive.
    private struct WeakServer {
        // Written once in the server's init, before the worker reads it.
        weak var server: SimulatedPeripheralServer?
    }
#endif
