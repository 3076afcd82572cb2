// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPDBus
    import SMPLink

    extension GATTTransport {
        /// A transport to an SMP device through BlueZ (Linux): each `connect()` opens a
        /// ``BlueZLink`` (see ``BlueZCentral``).
        /// - Parameters:
        ///   - options: the device, adapter, pairing, timeouts and bus.
        ///   - configuration: the GATT core's configuration (reassembly, idle timeout).
        /// - Returns: the transport.
        public static func bluez(
            _ options: BlueZCentral.Options,
            configuration: GATTTransport.Configuration = .init()
        ) -> GATTTransport {
            let central = BlueZCentral(options)
            return GATTTransport(
                endpointDescription: "ble://\(options.target)" + (options.adapter.map { "?adapter=\($0)" } ?? ""),
                configuration: configuration,
                connect: {
                    do {
                        return try await central.connect()
                    } catch let error as BlueZError {
                        throw error.transportError
                    }
                }
            )
        }
    }
#endif
