import SMPHCIHost
import SMPLink

extension GATTTransport {
    /// A transport to an SMP device through our own LE host on an HCI controller (a socket or a
    /// UART): each `connect()` opens an `HCIGATTLink` (see `HCICentral`), the controller kept
    /// from one connection to the next.
    /// - Parameters:
    ///   - options: the controller, the device and the timeouts.
    ///   - configuration: the GATT core's configuration (reassembly, idle timeout).
    /// - Returns: the transport.
    public static func hci(
        _ options: HCICentral.Options,
        configuration: GATTTransport.Configuration = .init()
    ) -> GATTTransport {
        let central = HCICentral(options)
        return GATTTransport(
            endpointDescription: "ble://\(options.target)?hci=\(options.controller.location)",
            configuration: configuration,
            connect: { try await central.connect() }
        )
    }
}
