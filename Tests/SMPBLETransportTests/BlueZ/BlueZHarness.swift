import Foundation
import MCUboot
import MCUmgr
import MCUmgrCommands
import MCUmgrDFU
import SMPBytes
import SMPDBus
import SMPLink
import SMPSimulator
import SMPTestSupport
import Testing

@testable import SMPBLETransport

/// Our central and our simulated peripheral on a bluezoo bus: the peripheral on `hci1`, the
/// central on `hci0`.
struct BlueZScene {
    let zoo: Bluezoo
    let device: SimulatedDevice
    let peripheral: SimulatedBlueZPeripheral

    /// Starts bluezoo and a registered, advertising peripheral named `name`.
    static func start(
        name: String = "Zephyr",
        offerAcquire: Bool = false,
        maximumMTU: Int = 498,
        device: SimulatedDevice = SimulatedDevice(configuration: .init(bufferSize: 2048, bufferCount: 4))
    ) async throws -> BlueZScene {
        let zoo = try await Bluezoo.start()
        do {
            let peripheral = SimulatedBlueZPeripheral(
                device: device,
                options: .init(
                    name: name,
                    adapter: "hci1",
                    offerAcquire: offerAcquire,
                    maximumMTU: maximumMTU,
                    busAddress: try zoo.address
                )
            )
            try await peripheral.start()
            return BlueZScene(zoo: zoo, device: device, peripheral: peripheral)
        } catch {
            zoo.stop()
            throw error
        }
    }

    /// Our central's options for the peripheral.
    func central(acquire: Bool = true, target: String = "Zephyr") throws -> BlueZCentral.Options {
        .init(
            target: target,
            adapter: "hci0",
            scanTimeout: .seconds(30),
            acquireSockets: acquire,
            busAddress: try zoo.address
        )
    }

    /// A GATT transport through our central.
    func transport(acquire: Bool = true) throws -> GATTTransport {
        GATTTransport.bluez(try central(acquire: acquire))
    }

    func stop() async {
        await peripheral.stop()
        zoo.stop()
    }
}

enum BlueZTesting {
    /// Timeouts far above a real run on a loaded machine (bluezoo answers in milliseconds).
    static let client = SMPClient.Configuration(timeout: .seconds(10), retries: 3)

    static func image(size: Int, version: (UInt8, UInt8) = (2, 0)) throws -> (
        package: FirmwarePackage.Image, hash: Data
    ) {
        let data = try BLEBenchmark.syntheticImage(size: size, version: version)
        let image = try MCUbootImage(bytes: Array(data))
        let hash = try #require(image.hash)
        return (FirmwarePackage.Image(image, imageIndex: 0, slot: 1), Data(hash))
    }

    static func upgrade(_ transport: GATTTransport, mode: FirmwareUpgrade.Mode) -> FirmwareUpgrade {
        FirmwareUpgrade(
            transport: transport,
            configuration: .init(
                mode: mode,
                firstChunkTimeout: .seconds(10),
                probeTimeout: .seconds(2),
                reconnectTimeout: .seconds(120),
                reconnectInterval: .milliseconds(100)
            ),
            clientConfiguration: client
        )
    }

    /// A transport whose one connection is an open link (a second `connect()` fails).
    static func transport(over link: BlueZLink) -> GATTTransport {
        let once = Locked<BlueZLink?>(link)
        return GATTTransport(endpointDescription: "ble://\(link.address)") {
            let taken = once.withLock { link in
                defer { link = nil }
                return link
            }
            guard let link = taken else { throw SMPTransportError(.connectionFailed, "used once") }
            return link
        }
    }

    /// Runs an upgrade to its end; returns whether it completed.
    static func run(_ upgrade: FirmwareUpgrade, _ image: FirmwarePackage.Image) async throws -> Bool {
        var completed = false
        for try await event in upgrade.run(images: [image]) {
            if case .completed = event { completed = true }
        }
        return completed
    }

    /// Waits (by counting pauses, generously) until `condition` holds.
    static func eventually(_ what: String, _ condition: @Sendable () async -> Bool) async throws {
        for _ in 0..<2400 {
            if await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("never: \(what)")
        throw PeerError(message: "never: \(what)")
    }
}
