import ArgumentParser
import MCUmgr
import SMPSimulator

/// Builds the in-process simulated device behind `sim://` URLs.
///
/// Each command gets a fresh device, so state does not survive between commands unless the URL
/// names a state directory (`sim://?state_dir=/tmp/dev`), which the simulator keeps its flash,
/// settings and files in.
enum InProcessSimulator {
    static func transport(options: [String: String], verbosity: Int) throws -> any SMPTransport {
        let configuration: SimulatedDevice.Configuration
        do {
            configuration = try SimulatedDevice.Configuration(options: options)
        } catch {
            throw ValidationError("sim://: \(error)")
        }
        return LoopbackTransport(device: SimulatedDevice(configuration: configuration))
    }
}
