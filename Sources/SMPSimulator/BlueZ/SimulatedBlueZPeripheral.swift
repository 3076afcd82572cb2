// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import Logging
    import SMPBytes
    import SMPCore
    import SMPDBus
    import SMPLink

    /// Serves a ``SimulatedDevice`` as a Bluetooth LE peripheral through BlueZ (Linux): registers the
    /// SMP GATT service with `GattManager1.RegisterApplication` and advertises it with
    /// `LEAdvertisingManager1.RegisterAdvertisement`, so a phone running nRF Connect Device Manager,
    /// `mcumgr --conn ble://NAME` or any central can update the simulated device.
    ///
    /// As a Zephyr device with `MCUMGR_TRANSPORT_BT_REASSEMBLY`: writes are reassembled by header
    /// length, a frame takes a buffer of the device's pool with its first fragment (none free: the
    /// frame is lost), the device's work queue answers with its processing time, and answers go out
    /// as notifications of at most the negotiated ATT MTU − 3 bytes (the `mtu` BlueZ passes with
    /// each write, capped by ``Options/maximumMTU``). When the device resets it drops the
    /// connection, as a real one does: `Device1.Disconnect` on the central, notifications off, the
    /// acquired sockets closed.
    ///
    /// `AcquireWrite` and `AcquireNotify` are always answered (a socket pair; smpclient asks for the
    /// MTU that way); they are *offered* — the `WriteAcquired`/`NotifyAcquired` properties exported,
    /// so BlueZ routes writes and notifications through the sockets — only with
    /// ``Options/offerAcquire``. When BlueZ restarts (`org.bluez` leaves the bus and comes back) the
    /// connection is dropped and the application and advertisement are registered again.
    public final class SimulatedBlueZPeripheral: Sendable {
        /// How to appear.
        public struct Options: Sendable, Hashable {
            /// The advertised local name.
            public var name: String
            /// The adapter (`hci1`); `nil` for the first one.
            public var adapter: String?
            /// Export `WriteAcquired` / `NotifyAcquired` so BlueZ uses the socket path.
            public var offerAcquire: Bool
            /// The largest ATT MTU this peripheral accepts (Zephyr's `BT_L2CAP_TX_MTU`, 498 in the
            /// MCUmgr samples). Notifications never exceed it less 3. Also exported as the
            /// characteristic's `MTU` property, which BlueZ ignores and bluezoo takes as the link's MTU.
            public var maximumMTU: Int
            /// The bus; `nil` for the system bus.
            public var busAddress: DBusAddress?

            /// Creates options.
            public init(
                name: String = "Zephyr",
                adapter: String? = nil,
                offerAcquire: Bool = false,
                maximumMTU: Int = 498,
                busAddress: DBusAddress? = nil
            ) {
                self.name = name
                self.adapter = adapter
                self.offerAcquire = offerAcquire
                self.maximumMTU = maximumMTU
                self.busAddress = busAddress
            }
        }

        /// The device served.
        public let device: SimulatedDevice
        /// The options.
        public let options: Options
        let logger = Logger(label: "mcumgr.simulator.bluez")

        static let root: DBusObjectPath = "/org/mcumgr/peripheral"
        static let smpService: DBusObjectPath = "/org/mcumgr/peripheral/service0"
        static let smpCharacteristic: DBusObjectPath = "/org/mcumgr/peripheral/service0/char0"
        static let advertisement: DBusObjectPath = "/org/mcumgr/peripheral/advertisement0"

        let state = Locked(BlueZPeripheralState())
        private let inbox: AsyncStream<(bytes: [UInt8], link: Int)>.Continuation
        private let inboxStream: AsyncStream<(bytes: [UInt8], link: Int)>
        /// Held while one response goes out, so the fragments of two are never interleaved.
        let sendOrder = Locked(())
        let notifications = DispatchQueue(label: "mcumgr.simulator.bluez.notify")

        /// Creates a peripheral (nothing is registered until ``start()``).
        /// - Parameters:
        ///   - device: the device to serve.
        ///   - options: name, adapter, acquire path, MTU, bus.
        public init(device: SimulatedDevice, options: Options = .init()) {
            self.device = device
            self.options = options
            (inboxStream, inbox) = AsyncStream.makeStream(of: (bytes: [UInt8], link: Int).self)
        }

        /// The endpoint, `ble://NAME`.
        public var endpointURL: String { "ble://\(options.name)" }

        /// Connections served so far (a connection starts with a central's first write, subscription
        /// or acquired socket after a drop).
        public var connectionCount: Int { state.withLock { $0.connections } }
        /// Notifications sent so far.
        public var notificationCount: Int { state.withLock { $0.notifications } }
        /// Times the link was dropped (device resets, link faults, BlueZ restarts).
        public var dropCount: Int { state.withLock { $0.drops } }

        /// Connects to the bus, registers the GATT application and the advertisement, and starts
        /// serving.
        /// - Throws: ``SimulatedBlueZPeripheralError`` naming what failed and what to try.
        public func start() async throws(SimulatedBlueZPeripheralError) {
            let bus: DBusConnection
            do {
                bus = try await DBusConnection.connect(to: options.busAddress ?? DBusAddress.systemBus())
            } catch {
                throw SimulatedBlueZPeripheralError("cannot reach the system D-Bus (\(error)); is dbus running?")
            }
            state.withLock { $0.bus = bus }
            exportObjects(on: bus)
            do {
                try await register(on: bus)
            } catch {
                bus.close()
                throw error
            }
            startProcessing()
            watchBlueZ(bus)
        }

        /// Waits until the bus connection is lost, which ends the Bluetooth LE service for good: the
        /// bus went away (its daemon ended), which a user should hear about rather than find out from
        /// centrals that no longer see the device.
        /// - Returns: why the connection closed, for people ("the bus closed the connection"); `nil`
        ///   when ``stop()`` closed it, or when the peripheral was never started.
        public func busLost() async -> String? {
            guard let bus = state.withLock({ $0.bus }) else { return nil }
            let reason = await bus.waitUntilClosed()
            return state.withLock { $0.stopped } ? nil : reason.message
        }

        /// Unregisters and disconnects from the bus.
        public func stop() async {
            guard let bus = state.withLock({ $0.bus }) else { return }
            state.withLock { $0.stopped = true }
            drop(reason: "stopped", disconnectCentral: true)
            if let adapter = state.withLock({ $0.adapter }) {
                _ = try? await bus.call(
                    destination: "org.bluez",
                    path: adapter,
                    interface: "org.bluez.LEAdvertisingManager1",
                    member: "UnregisterAdvertisement",
                    body: [.objectPath(Self.advertisement)],
                    timeout: .seconds(2)
                )
                _ = try? await bus.call(
                    destination: "org.bluez",
                    path: adapter,
                    interface: "org.bluez.GattManager1",
                    member: "UnregisterApplication",
                    body: [.objectPath(Self.root)],
                    timeout: .seconds(2)
                )
            }
            inbox.finish()
            bus.close()
        }

        // MARK: - Registration

        /// Finds the adapter and registers the application and the advertisement on it.
        func register(on bus: DBusConnection) async throws(SimulatedBlueZPeripheralError) {
            let adapter = try await findAdapter(bus)
            state.withLock { $0.adapter = adapter }
            do {
                _ = try await bus.call(
                    destination: "org.bluez",
                    path: adapter,
                    interface: "org.bluez.GattManager1",
                    member: "RegisterApplication",
                    body: [.objectPath(Self.root), .options([])]
                )
                _ = try await bus.call(
                    destination: "org.bluez",
                    path: adapter,
                    interface: "org.bluez.LEAdvertisingManager1",
                    member: "RegisterAdvertisement",
                    body: [.objectPath(Self.advertisement), .options([])]
                )
            } catch {
                throw SimulatedBlueZPeripheralError(
                    "BlueZ refused to register the SMP service or its advertisement: \(error)"
                )
            }
            logger.debug("registered", metadata: ["adapter": "\(adapter)", "name": "\(options.name)"])
        }

        private func findAdapter(_ bus: DBusConnection) async throws(SimulatedBlueZPeripheralError) -> DBusObjectPath {
            let reply: DBusReceivedMessage
            do {
                reply = try await bus.call(
                    destination: "org.bluez",
                    path: .root,
                    interface: "org.freedesktop.DBus.ObjectManager",
                    member: "GetManagedObjects"
                )
            } catch let error as DBusRemoteError
                where error.name.hasSuffix("ServiceUnknown") || error.name.hasSuffix("NameHasNoOwner")
            {
                throw SimulatedBlueZPeripheralError(
                    "BlueZ (org.bluez) is not running on the system bus; start it with 'systemctl start bluetooth'"
                )
            } catch let error as DBusRemoteError where error.name.hasSuffix("AccessDenied") {
                throw SimulatedBlueZPeripheralError(
                    "the D-Bus policy does not let this user talk to BlueZ; run as root or in the 'bluetooth' group"
                )
            } catch {
                throw SimulatedBlueZPeripheralError("cannot list BlueZ's adapters: \(error)")
            }
            var adapters: [(DBusObjectPath, Bool)] = []
            if case .dictionary(_, _, let entries)? = reply.message.body.first {
                for entry in entries {
                    guard case .objectPath(let path) = entry.key,
                        let properties = entry.value.stringDictionary?["org.bluez.Adapter1"]?.stringDictionary
                    else { continue }
                    adapters.append((path, properties["Powered"]?.boolValue ?? false))
                }
            }
            adapters.sort { $0.0 < $1.0 }
            let wanted = options.adapter
            guard let chosen = adapters.first(where: { wanted == nil || $0.0.rawValue.hasSuffix("/" + (wanted ?? "")) })
            else {
                throw SimulatedBlueZPeripheralError(
                    wanted.map { "no Bluetooth adapter \($0)" }
                        ?? "no Bluetooth adapter: BlueZ lists none ('bluetoothctl list')"
                )
            }
            guard chosen.1 else {
                throw SimulatedBlueZPeripheralError(
                    "Bluetooth adapter \(chosen.0.rawValue.split(separator: "/").last ?? "") is powered off; "
                        + "turn it on with 'bluetoothctl power on'"
                )
            }
            return chosen.0
        }

        /// When BlueZ leaves the bus the connection is gone; when it comes back, register again.
        private func watchBlueZ(_ bus: DBusConnection) {
            Task { [weak self] in
                let rule = DBusMatchRule(
                    sender: "org.freedesktop.DBus",
                    interface: "org.freedesktop.DBus",
                    member: "NameOwnerChanged",
                    arg0: "org.bluez"
                )
                guard let signals = try? await bus.signals(matching: rule) else { return }
                for await signal in signals {
                    guard let self, signal.message.body.count == 3 else { continue }
                    if signal.message.body[2].stringValue == "" {
                        self.drop(reason: "BlueZ left the bus", disconnectCentral: false)
                    } else {
                        await self.registerAgain(on: bus)
                    }
                }
            }
        }

        private func registerAgain(on bus: DBusConnection) async {
            // BlueZ (or bluezoo) adds its adapters just after taking the name: try for a while.
            for _ in 0..<100 {
                do {
                    try await register(on: bus)
                    return
                } catch {
                    try? await Task.sleep(for: .milliseconds(100))
                }
            }
            logger.error("could not register again after BlueZ came back")
        }

        // MARK: - The data path

        /// One task takes every write (D-Bus or socket) in arrival order, as the controller does.
        private func startProcessing() {
            let stream = inboxStream
            Task { [weak self] in
                var reassembly = BlueZReassembly()
                for await (bytes, link) in stream {
                    guard let self else { return }
                    await self.process(bytes, link: link, reassembly: &reassembly)
                }
            }
        }

        /// Queues a write of the connection `link`.
        func received(_ bytes: [UInt8], link: Int) {
            inbox.yield((bytes, link))
        }

        private func process(_ bytes: [UInt8], link: Int, reassembly: inout BlueZReassembly) async {
            guard link == state.withLock({ $0.link }) else { return }
            if reassembly.link != link { await reassembly.reset(link: link, device: device) }
            for frame in reassembly.decoder.feed(bytes).compactMap({ if case .frame(let f) = $0 { f } else { nil } }) {
                let buffer: SimulatedDevice.ReceiveBuffer?
                if let started = reassembly.held {
                    buffer = started
                    reassembly.held = nil
                } else {
                    buffer = await device.reserveBuffer()
                }
                guard let buffer else {
                    logger.debug("lost a frame: no free buffer")
                    continue
                }
                await device.receive(frame, in: buffer) { [weak self] delivery in
                    await self?.deliver(delivery, link: link)
                }
            }
            if reassembly.decoder.bufferedByteCount > 0 && reassembly.held == nil {
                // Zephyr takes a pool buffer with a frame's first fragment.
                reassembly.held = await device.reserveBuffer()
            }
        }

        private func deliver(_ delivery: LinkDelivery, link: Int) async {
            for scheduled in delivery.responses {
                if scheduled.delay > .zero { try? await Task.sleep(for: scheduled.delay) }
                // A full notification socket blocks its writer: that happens on the notification
                // queue's thread, never on Swift's cooperative pool. The queue is serial, so
                // responses leave in the order the device answered.
                notifications.async { [self] in notify(scheduled.frame, link: link) }
            }
            // The drop joins the same queue, so it follows the answers already on their way.
            if delivery.disconnect || (delivery.deviceResets && delivery.responses.isEmpty) {
                notifications.async { [self] in drop(reason: "the link dropped", disconnectCentral: true, link: link) }
            } else if delivery.deviceResets {
                // The device runs on for its reset delay after answering, then reboots.
                try? await Task.sleep(for: device.configuration.resetDelay)
                notifications.async { [self] in drop(reason: "the device reset", disconnectCentral: true, link: link) }
            }
        }
    }

    /// The simulator could not serve over BlueZ.
    public struct SimulatedBlueZPeripheralError: Error, Sendable, CustomStringConvertible {
        /// What failed and what to try.
        public var message: String
        /// Creates an error.
        /// - Parameter message: what failed and what to try.
        public init(_ message: String) { self.message = message }
        public var description: String { message }
    }

    /// The reassembly of the current connection: the stream decoder and the pool buffer a frame took
    /// with its first fragment.
    struct BlueZReassembly {
        var link = -1
        var decoder = SMPStreamDecoder()
        var held: SimulatedDevice.ReceiveBuffer?

        mutating func reset(link: Int, device: SimulatedDevice) async {
            if let held { await device.releaseBuffer(held) }
            held = nil
            decoder.reset()
            self.link = link
        }
    }
#endif
