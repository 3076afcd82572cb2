import Foundation
import MCUmgrKit
import SMPSimulator

/// A simulated device, and the code that upgrades it.
struct SimulatedUpgrade {
    /// The simulated device: a Zephyr application under MCUboot, running its factory image 1.0.0.
    let device: SimulatedDevice
    /// How clients reach the device: in-process, as `mcumgr --conn sim://` does.
    let transport: LoopbackTransport
    /// Requests time out after a second: the device answers in microseconds, so a lost answer
    /// should cost little.
    let clientConfiguration = SMPClient.Configuration(timeout: .seconds(1))

    /// Creates a device from `sim://` options, e.g. `["mode": "overwrite"]`; none gives the defaults.
    init(simulatorOptions: [String: String] = [:]) throws {
        let configuration = try SimulatedDevice.Configuration(options: simulatorOptions)
        device = SimulatedDevice(configuration: configuration)
        transport = LoopbackTransport(device: device)
    }

    /// Prints the device's image list, as `mcumgr image list` does.
    func printSlots() async throws {
        let client = try await SMPClient.connect(transport, configuration: clientConfiguration)
        let state = try await client.send(ImageManagement.StateRead())
        await client.close()
        for slot in state.images {
            let flags = [
                slot.isActive ? "active" : nil,
                slot.isConfirmed ? "confirmed" : nil,
                slot.isPending ? "pending" : nil,
            ].compactMap { $0 }.joined(separator: " ")
            print("image \(slot.imageNumber) slot \(slot.slot): \(slot.version) \(flags)")
        }
    }

    /// Makes the device's link lose every fifth answer, as a noisy radio or a busy network does.
    func loseAnswers() async {
        await device.inject(.dropResponses(every: 5))
    }

    /// Upgrades the device to the firmware in a file and returns how the upgrade ended.
    func upgrade(to imageURL: URL) async throws -> FirmwareUpgrade.Summary {
        let package = try FirmwarePackage(contentsOf: imageURL)
        for image in package.images {
            let hash = image.hash.map { String(format: "%02x", $0) }.joined()
            print("\(image.fileName): image \(image.imageIndex), version \(image.version?.description ?? "?"), \(hash)")
        }

        let upgrade = FirmwareUpgrade(
            transport: transport,
            configuration: .init(mode: .testAndConfirm, firstChunkTimeout: .seconds(2)),
            clientConfiguration: clientConfiguration
        )
        for try await event in upgrade.run(package) {
            switch event {
            case .stateChanged(_, let state):
                print("» \(state)")
            case .uploadProgress(let progress):
                print("  \(progress.totalBytesConfirmed) of \(progress.totalBytes) bytes")
            case .warning(let text):
                print("warning: \(text)")
            case .completed(let summary):
                return summary
            default:
                break
            }
        }
        // The events end without `.completed` only when this task was cancelled.
        throw CancellationError()
    }
}
