import ArgumentParser
import Foundation
import MCUmgr
import SMPBytes
import SMPLink
import SMPSimulator

/// Builds the in-process simulated device behind `sim://` URLs.
///
/// Without a state directory every command gets a fresh device. With one
/// (`sim://?state_dir=/tmp/dev`) the device keeps its flash, settings and files there, and
/// within one process the same running device serves every command naming that directory, so a
/// program or test that runs several commands in-process sees one device stay up between them
/// (a separate `mcumgr` process boots it again from the directory).
enum InProcessSimulator {
    static func transport(options: [String: String], verbosity: Int) throws -> any SMPTransport {
        let configuration: SimulatedDevice.Configuration
        do {
            configuration = try SimulatedDevice.Configuration(options: options)
        } catch {
            throw ValidationError("sim://: \(error)")
        }
        guard let directory = configuration.stateDirectory?.standardizedFileURL.path else {
            return LoopbackTransport(device: SimulatedDevice(configuration: configuration))
        }
        do {
            try configuration.checkStateDirectory()
        } catch {
            throw error.commandFailure(naming: "sim://?state_dir")
        }
        let key = options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        let device = running.device(for: directory + "?" + key) { SimulatedDevice(configuration: configuration) }
        return LoopbackTransport(device: device)
    }

    private static let running = RunningDevices()
}

extension ConfigurationError {
    /// The command's failure for a state folder that cannot be used, the same for `sim://` and
    /// `mcumgr simulator`: damaged saved flash is bad input data (status 65), a folder that cannot
    /// be written a local failure (1); neither is a mistyped command line.
    /// - Parameter option: how the user named the folder, e.g. `--state-dir`.
    func commandFailure(naming option: String) -> any Error {
        let text = "\(option): \(message)"
        return switch subject {
        case .savedFlash: InputFileError(.badData, text)
        case .stateFolder: CommandFailure(text)
        case .option: ValidationError(text)
        }
    }
}

/// The devices alive in this process, by state directory and options.
private final class RunningDevices: Sendable {
    private let devices = Locked<[String: SimulatedDevice]>([:])

    func device(for key: String, make: () -> SimulatedDevice) -> SimulatedDevice {
        devices.withLock { devices in
            if let existing = devices[key] { return existing }
            let device = make()
            devices[key] = device
            return device
        }
    }
}
