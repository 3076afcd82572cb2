import Foundation
import SMPSimulator

/// A simulated device, and the code that upgrades it.
struct SimulatedUpgrade {
    /// The simulated device: a Zephyr application under MCUboot, running its factory image 1.0.0.
    let device: SimulatedDevice
    /// How clients reach the device: in-process, as `mcumgr --conn sim://` does.
    let transport: LoopbackTransport

    /// Creates a device from `sim://` options, e.g. `["mode": "overwrite"]`; none gives the defaults.
    init(simulatorOptions: [String: String] = [:]) throws {
        let configuration = try SimulatedDevice.Configuration(options: simulatorOptions)
        device = SimulatedDevice(configuration: configuration)
        transport = LoopbackTransport(device: device)
    }
}
