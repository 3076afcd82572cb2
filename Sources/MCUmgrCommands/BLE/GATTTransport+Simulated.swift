import SMPBLETransport
import SMPSimulator

// The simulated peripheral (SMPSimulator) and the transport core (SMPBLETransport) meet here: the
// simulator depends on no transport, so the factory that joins them lives with the commands.
extension GATTTransport {
    /// A transport to a simulated peripheral; each `GATTTransport.connect()` opens a new link to it.
    /// - Parameters:
    ///   - peripheral: the peripheral.
    ///   - reassemblyIdleTimeout: how long a partial response waits for its next notification.
    /// - Returns: the transport.
    public static func simulated(
        _ peripheral: SimulatedBLEPeripheral,
        reassemblyIdleTimeout: Duration = .seconds(1)
    ) -> GATTTransport {
        GATTTransport(
            endpointDescription: "ble-sim://\(peripheral.name)",
            configuration: .init(
                deviceReassembles: peripheral.profile.deviceReassembly,
                reassemblyIdleTimeout: reassemblyIdleTimeout
            ),
            connect: { await peripheral.connect() }
        )
    }
}
