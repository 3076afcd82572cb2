// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import SMPDBus
    import SMPLink

    /// Opens ``BlueZLink``s to an SMP device through BlueZ on Linux (`ble://NAME`,
    /// `ble://AA:BB:CC:DD:EE:FF`, `?adapter=hci1`, `?pair=1`).
    ///
    /// Each ``connect()`` opens its own system-bus connection: checks that BlueZ runs, picks the
    /// adapter, finds the device (discovery filtered on the SMP service UUID when it is not already
    /// connected or paired), pairs when asked, connects, waits for `ServicesResolved`, finds the SMP
    /// characteristic by UUID and subscribes. Every failure is one ``BlueZError`` line.
    public struct BlueZCentral: Sendable {
        /// What to connect to and how.
        public struct Options: Sendable, Hashable {
            /// The device's name (advertised name or alias) or address.
            public var target: String
            /// The adapter (`hci1`); `nil` for the first one.
            public var adapter: String?
            /// Pair (as a NoInputNoOutput agent: Just Works) before connecting when not paired yet.
            public var pair: Bool
            /// How long discovery looks for the device.
            public var scanTimeout: Duration
            /// How long connecting and resolving services may take.
            public var connectTimeout: Duration
            /// Use `AcquireWrite` / `AcquireNotify` when BlueZ offers them (else always `WriteValue` and
            /// `StartNotify`).
            public var acquireSockets: Bool
            /// The bus; `nil` for the system bus (`DBUS_SYSTEM_BUS_ADDRESS`, else the default socket).
            public var busAddress: DBusAddress?

            /// Creates options.
            public init(
                target: String,
                adapter: String? = nil,
                pair: Bool = false,
                scanTimeout: Duration = .seconds(10),
                connectTimeout: Duration = .seconds(30),
                acquireSockets: Bool = true,
                busAddress: DBusAddress? = nil
            ) {
                self.target = target
                self.adapter = adapter
                self.pair = pair
                self.scanTimeout = scanTimeout
                self.connectTimeout = connectTimeout
                self.acquireSockets = acquireSockets
                self.busAddress = busAddress
            }
        }

        /// The options.
        public let options: Options

        /// Creates a central.
        /// - Parameter options: what to connect to.
        public init(_ options: Options) {
            self.options = options
        }

        /// Opens a link.
        /// - Returns: the connected, subscribed link.
        /// - Throws: ``BlueZError`` naming what failed and what to try.
        public func connect() async throws(BlueZError) -> BlueZLink {
            let bus = try await Self.openBus(options.busAddress)
            do {
                let observer = try await Self.observe(bus)
                do {
                    return try await connect(bus: bus, observer: observer)
                } catch {
                    observer.cancel()
                    throw error
                }
            } catch {
                bus.close()
                throw BlueZError.from(error, doing: "cannot connect to '\(options.target)'")
            }
        }

        private func connect(bus: DBusConnection, observer: BlueZObserver) async throws -> BlueZLink {
            let adapter = try Self.adapter(named: options.adapter, in: observer.snapshot)
            var device = try await find(on: adapter, bus: bus, observer: observer)
            if options.pair && !device.paired {
                try await BlueZPairing.pair(device, bus: bus, observer: observer, timeout: options.connectTimeout)
            }
            device = try await connectDevice(device, bus: bus, observer: observer)
            guard let characteristic = observer.snapshot.smpCharacteristic(of: device.path) else {
                _ = try? await bus.call(
                    destination: BlueZ.service,
                    path: device.path,
                    interface: BlueZ.deviceInterface,
                    member: "Disconnect"
                )
                throw BlueZError(
                    .noSMPService,
                    "'\(device.displayName)' (\(device.address)) has no SMP service \(SMPGATT.serviceUUID) "
                        + "with characteristic \(SMPGATT.characteristicUUID)"
                )
            }
            let channels = try await BlueZSubscription.open(
                characteristic,
                device: device,
                bus: bus,
                acquire: options.acquireSockets
            )
            return BlueZLink(
                connection: bus,
                observer: observer,
                device: device,
                characteristic: characteristic.path,
                channels: channels
            )
        }

        // MARK: - Steps

        static func openBus(_ address: DBusAddress?) async throws(BlueZError) -> DBusConnection {
            let resolved: DBusAddress
            do {
                resolved = try address ?? DBusAddress.systemBus()
                return try await DBusConnection.connect(to: resolved)
            } catch {
                throw BlueZError(.busUnavailable, unreachableBus(address), cause: error)
            }
        }

        /// Why no bus answered, naming where the address came from: blaming
        /// `DBUS_SYSTEM_BUS_ADDRESS` when it is unset sent people looking for a variable they never set.
        /// - Parameters:
        ///   - address: the address the caller gave, if any.
        ///   - environment: the process's environment.
        static func unreachableBus(
            _ address: DBusAddress?,
            environment: [String: String] = ProcessInfo.processInfo.environment
        ) -> String {
            if let address {
                return "cannot reach the D-Bus at \(address.description); is that bus running?"
            }
            if let variable = environment["DBUS_SYSTEM_BUS_ADDRESS"], !variable.isEmpty {
                return "cannot reach the system D-Bus that DBUS_SYSTEM_BUS_ADDRESS names; is that bus running?"
            }
            return "cannot reach the system D-Bus at its default socket; is dbus running?"
        }

        /// Checks that BlueZ owns its name, then starts observing it.
        static func observe(_ bus: DBusConnection) async throws -> BlueZObserver {
            do {
                _ = try await bus.call(
                    destination: "org.freedesktop.DBus",
                    path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus",
                    member: "GetNameOwner",
                    body: [.string(BlueZ.service)]
                )
            } catch let error as DBusRemoteError where error.name == "org.freedesktop.DBus.Error.NameHasNoOwner" {
                throw BlueZError.notRunningError(error)
            }
            return try await BlueZObserver.start(bus)
        }

        static func adapter(named name: String?, in tree: BlueZObjectTree) throws(BlueZError) -> BlueZAdapter {
            let adapters = tree.adapters
            guard !adapters.isEmpty else {
                throw BlueZError(
                    .noAdapter,
                    "no Bluetooth adapter: BlueZ lists none ('bluetoothctl list'); plug one in"
                )
            }
            let chosen: BlueZAdapter
            if let name {
                guard
                    let match = adapters.first(where: {
                        $0.name == name || $0.address.uppercased() == name.uppercased()
                    })
                else {
                    throw BlueZError(
                        .noAdapter,
                        "no Bluetooth adapter \(name); BlueZ has \(adapters.map(\.name).joined(separator: ", "))"
                    )
                }
                chosen = match
            } else {
                chosen = adapters[0]
            }
            guard chosen.powered else {
                throw BlueZError(
                    .adapterOff,
                    "Bluetooth adapter \(chosen.name) is powered off; turn it on with 'bluetoothctl power on'"
                )
            }
            return chosen
        }

        /// A device already connected or paired is used as it is; anything else is looked for with
        /// discovery filtered on the SMP service.
        private func find(on adapter: BlueZAdapter, bus: DBusConnection, observer: BlueZObserver) async throws
            -> BlueZDevice
        {
            let target = options.target
            let known = observer.snapshot.devices(on: adapter.path).first { $0.matches(target) }
            if let known, known.connected || known.paired { return known }
            try await BlueZDiscovery.start(on: adapter, bus: bus)
            let found = await observer.wait(timeout: options.scanTimeout) { tree in
                tree.devices(on: adapter.path).first { $0.matches(target) }
            }
            await BlueZDiscovery.stop(on: adapter, bus: bus)
            guard let found else {
                throw BlueZError(
                    .notFound,
                    "no SMP device '\(target)' found within \(options.scanTimeout.components.seconds) s on \(adapter.name); "
                        + "check that it advertises and is in range ('mcumgr ble scan' lists what is)"
                )
            }
            return found
        }

        private func connectDevice(_ device: BlueZDevice, bus: DBusConnection, observer: BlueZObserver) async throws
            -> BlueZDevice
        {
            if !device.connected {
                do {
                    _ = try await bus.call(
                        destination: BlueZ.service,
                        path: device.path,
                        interface: BlueZ.deviceInterface,
                        member: "Connect",
                        timeout: options.connectTimeout
                    )
                } catch let error as DBusRemoteError
                    where error.name == "org.bluez.Error.AlreadyConnected"
                    || error.name == "org.bluez.Error.InProgress"
                {
                    // Someone else is connecting or connected it: wait for the result below.
                } catch {
                    throw BlueZError.from(
                        error,
                        doing: "BlueZ could not connect \(device.address)",
                        address: device.address
                    )
                }
            }
            let resolved = await observer.wait(timeout: options.connectTimeout) { tree in
                tree.device(at: device.path).flatMap { $0.connected && $0.servicesResolved ? $0 : nil }
            }
            guard let resolved else {
                throw BlueZError(
                    .connectionFailed,
                    "\(device.address) did not connect and resolve its services within "
                        + "\(options.connectTimeout.components.seconds) s"
                )
            }
            return resolved
        }
    }

    /// Starting and stopping discovery filtered on the SMP service.
    enum BlueZDiscovery {
        static func start(on adapter: BlueZAdapter, bus: DBusConnection) async throws {
            let filter = DBusValue.options([
                ("UUIDs", .strings([SMPGATT.serviceUUID.lowercased()])),
                ("Transport", .string("le")),
                ("DuplicateData", .boolean(false)),
            ])
            _ = try await bus.call(
                destination: BlueZ.service,
                path: adapter.path,
                interface: BlueZ.adapterInterface,
                member: "SetDiscoveryFilter",
                body: [filter]
            )
            do {
                _ = try await bus.call(
                    destination: BlueZ.service,
                    path: adapter.path,
                    interface: BlueZ.adapterInterface,
                    member: "StartDiscovery"
                )
            } catch let error as DBusRemoteError where error.name == "org.bluez.Error.InProgress" {
                // Another client is discovering: its results serve us too.
            } catch let error as DBusRemoteError where error.name == "org.bluez.Error.NotReady" {
                throw BlueZError(
                    .adapterOff,
                    "Bluetooth adapter \(adapter.name) is not ready ('bluetoothctl power on')",
                    cause: error
                )
            }
        }

        static func stop(on adapter: BlueZAdapter, bus: DBusConnection) async {
            _ = try? await bus.call(
                destination: BlueZ.service,
                path: adapter.path,
                interface: BlueZ.adapterInterface,
                member: "StopDiscovery",
                timeout: .seconds(5)
            )
        }
    }
#endif
