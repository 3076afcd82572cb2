#if canImport(CoreBluetooth)
    @preconcurrency import CoreBluetooth
    import Foundation
    import SMPLink
    import SMPCore

    /// Serves a ``SimulatedDevice`` as a real Bluetooth LE peripheral through `CBPeripheralManager`
    /// (macOS), so phone apps (nRF Connect Device Manager) and other hosts can update it: the SMP
    /// service and characteristic, Device Information and Battery, advertised under `name`.
    ///
    /// Writes are reassembled by header length (as `MCUMGR_TRANSPORT_BT_REASSEMBLY` does), handled
    /// one at a time in arrival order, and answered by notifications of at most the central's
    /// `maximumUpdateValueLength`; a full notification queue waits for
    /// `peripheralManagerIsReady(toUpdateSubscribers:)`.
    ///
    /// `@unchecked Sendable`: all mutable state is used only on `queue`, where the manager calls back.
    public final class SimulatedPeripheralServer: NSObject, CBPeripheralManagerDelegate, @unchecked Sendable {
        /// The device served.
        public let device: SimulatedDevice
        /// The advertised local name.
        public let name: String
        private let queue = DispatchQueue(label: "mcumgr.ble.peripheral")
        private var manager: CBPeripheralManager?
        private var started: CheckedContinuation<Void, any Error>?
        private let smp = CBMutableCharacteristic(
            type: CBUUID(string: SMPGATT.characteristicUUID),
            properties: [.writeWithoutResponse, .notify],
            value: nil,
            permissions: [.writeable]
        )
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
            let box = WeakServer()
            worker = Task {
                for await request in stream {
                    let central = request.central
                    await device.receive(request.frame) { delivery in
                        box.server?.answer(delivery.responses.map(\.frame), to: central)
                    }
                }
            }
            super.init()
            box.server = self
        }

        deinit {
            worker.cancel()
            requests.finish()
        }

        /// Powers on, publishes the services and advertises the SMP service and the name.
        /// - Throws: ``SMPTransportError`` `.unavailable` when Bluetooth is off or not allowed.
        public func start() async throws {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                queue.async {
                    guard self.manager == nil, self.started == nil else {
                        continuation.resume(throwing: SMPTransportError(.unavailable, "the server was already started"))
                        return
                    }
                    self.started = continuation
                    self.manager = CBPeripheralManager(delegate: self, queue: self.queue)  // → didUpdateState
                }
            }
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
                started?.resume(throwing: SMPTransportError(.unavailable, "could not add a service", cause: error))
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
            if let refused = requests.first(where: { $0.characteristic.uuid != smp.uuid || $0.offset != 0 }) {
                peripheral.respond(
                    to: first,
                    withResult: refused.characteristic.uuid != smp.uuid ? .writeNotPermitted : .invalidOffset
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

        /// Only dynamic values reach this (the information characteristics are cached and answered
        /// by CoreBluetooth); the SMP characteristic is not readable. Answered exactly once.
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
            guard characteristic.uuid == smp.uuid else { return }
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
            // After Bluetooth is switched off and on, services added before may linger: adding
            // them again would publish duplicates.
            manager.removeAllServices()
            let service = CBMutableService(type: CBUUID(string: SMPGATT.serviceUUID), primary: true)
            service.characteristics = [smp]
            let information = CBMutableService(
                type: CBUUID(string: SMPGATT.deviceInformationServiceUUID),
                primary: true
            )
            information.characteristics = [
                ("2A29", "Zephyr"), ("2A24", "swift-mcumgr simulator"), ("2A26", device.configuration.factoryVersion),
            ].map { uuid, text in
                CBMutableCharacteristic(
                    type: CBUUID(string: uuid),
                    properties: [.read],
                    value: Data(text.utf8),
                    permissions: [.readable]
                )
            }
            let battery = CBMutableService(type: CBUUID(string: SMPGATT.batteryServiceUUID), primary: true)
            battery.characteristics = [
                CBMutableCharacteristic(
                    type: CBUUID(string: "2A19"),
                    properties: [.read],
                    value: Data([100]),
                    permissions: [.readable]
                )
            ]
            for published in [service, information, battery] { manager.add(published) }
            manager.startAdvertising([
                CBAdvertisementDataLocalNameKey: name,
                CBAdvertisementDataServiceUUIDsKey: [CBUUID(string: SMPGATT.serviceUUID)],
            ])
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
            guard let manager else { return }
            while let next = outgoing.first {
                guard manager.updateValue(next.value, for: smp, onSubscribedCentrals: [next.central]) else { return }
                outgoing.removeFirst()
            }
        }
    }

    /// Lets the worker task reach the server without keeping it alive.
    private final class WeakServer: @unchecked Sendable {
        // Written once in the server's init, before the worker reads it.
        weak var server: SimulatedPeripheralServer?
    }
#endif
