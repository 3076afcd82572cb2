// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPDBus
    import SMPLink

    /// Finds SMP devices in range through BlueZ (`mcumgr ble scan`): discovery filtered on the SMP
    /// service UUID for a while, then the devices that advertised it.
    public enum BlueZScanner {
        /// One device seen.
        public struct Device: Sendable, Hashable {
            /// Its advertised name (or alias), if any.
            public var name: String?
            /// Its address.
            public var address: String
            /// Signal strength of its last advertisement, if BlueZ reported one.
            public var rssi: Int?
            /// Whether this host is connected to it.
            public var connected: Bool
            /// The adapter that saw it (`hci0`).
            public var adapter: String
        }

        /// Scans.
        /// - Parameters:
        ///   - adapter: the adapter (`hci1`), or `nil` for the first one.
        ///   - timeout: how long discovery runs.
        ///   - busAddress: the bus; `nil` for the system bus.
        /// - Returns: the SMP devices seen, strongest signal first.
        /// - Throws: ``BlueZError`` when the bus, BlueZ or the adapter cannot be used.
        public static func scan(adapter: String?, timeout: Duration, busAddress: DBusAddress? = nil)
            async throws(BlueZError) -> [Device]
        {
            let bus = try await BlueZCentral.openBus(busAddress)
            defer { bus.close() }
            do {
                let observer = try await BlueZCentral.observe(bus)
                defer { observer.cancel() }
                let chosen = try BlueZCentral.adapter(named: adapter, in: observer.snapshot)
                try await BlueZDiscovery.start(on: chosen, bus: bus)
                _ = await observer.wait(timeout: timeout) { _ -> Bool? in nil }
                await BlueZDiscovery.stop(on: chosen, bus: bus)
                return observer.snapshot.devices(on: chosen.path)
                    .filter { $0.advertisesSMP && ($0.rssi != nil || $0.connected) }
                    .map {
                        Device(
                            name: $0.name ?? $0.alias,
                            address: $0.address,
                            rssi: $0.rssi,
                            connected: $0.connected,
                            adapter: chosen.name
                        )
                    }
                    .sorted { ($0.rssi ?? -128, $1.address) > ($1.rssi ?? -128, $0.address) }
            } catch {
                throw BlueZError.from(error, doing: "cannot scan")
            }
        }
    }
#endif
