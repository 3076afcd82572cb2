import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import MCUmgrFleet
import SMPCore
import SMPLink
import SMPSimulator
import Testing

/// Runs rollouts against simulated fleets over UDP, in this process.
enum FleetHarness {
    /// A fresh path in a folder of its own under the temporary directory.
    static func scratch(_ name: String) -> String {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("fleet-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder.appendingPathComponent(name).path
    }

    /// A device as the acceptance asks: 20 ms of latency each way, Zephyr's observed reset timing,
    /// and 512 KiB slots, so that a 256 KiB image leaves room for MCUboot's trailer.
    static func device(latency: Duration = .milliseconds(20)) -> SimulatedDevice.Configuration {
        var configuration = SimulatedDevice.Configuration.udp
        configuration.linkLatency = latency
        configuration.slotSize = 0x80000
        return configuration
    }

    /// A package of one synthetic image of about `size` bytes, version 2.0.0.
    static func package(size: Int) throws -> FirmwarePackage {
        let image = FactoryImage.make(
            version: ImageVersion(major: 2, minor: 0, revision: 0),
            payloadSize: max(64, size - 0x200 - 40)
        )
        return try FirmwarePackage(data: Data(image), fileName: "app-2.0.0.bin")
    }

    /// Clients that give a silent device up within seconds (a dead device costs each attempt
    /// 2 × 2 s) but ride out a loaded machine.
    static let client = SMPClient.Configuration(timeout: .seconds(2), retries: 1)

    /// Runs a rollout to its end and returns its outcome and every event.
    static func run(
        _ package: FirmwarePackage,
        fleet: SimulatedFleet,
        policy: RolloutPolicy,
        state: String,
        retryFailed: Bool = false
    ) async throws -> (outcome: RolloutOutcome, events: [FleetEvent]) {
        let inventory = try Inventory(parsing: fleet.inventory)
        let store = try await SQLiteRolloutStore(path: state)
        let upgrade = FleetUpgrade(
            policy: policy,
            configuration: FirmwareUpgrade.Configuration(mode: .confirmOnly),
            clientConfiguration: client,
            worker: "test-host",
            retryFailed: retryFailed
        )
        var events: [FleetEvent] = []
        var outcome: RolloutOutcome?
        do {
            for try await event in upgrade.run(package, file: "app.bin", inventory: inventory, store: store) {
                events.append(event)
                if case .finished(let ended) = event { outcome = ended }
            }
        } catch {
            await store.close()
            throw error
        }
        await store.close()
        return (try #require(outcome), events)
    }

    /// Whether a device runs the image, confirmed, by its own image list.
    static func runsConfirmed(_ hash: [UInt8], _ device: SimulatedDevice) async -> Bool {
        await device.imageStates.contains { $0.hash == Data(hash) && $0.isActive && $0.isConfirmed }
    }
}

extension FleetHarness {
    /// What both stores' `rollouts()` must list: every rollout, the one started or resumed last
    /// first (not by name: the later one has the smaller), with its devices by status.
    /// Closed whatever the checks throw (PostgresNIO traps on a connection released unclosed).
    static func listsEveryRolloutNewestFirst(_ store: any RolloutStore) async throws {
        do {
            try await checkTheList(of: store)
        } catch {
            await store.close()
            throw error
        }
        await store.close()
    }

    private static func checkTheList(of store: any RolloutStore) async throws {
        #expect(try await store.rollouts().isEmpty)
        let later = RolloutDescription(id: "r2", file: "app.bin", mode: "confirm-only", versions: ["2.0.0"])
        let earlier = RolloutDescription(id: "r1", file: "old.bin", mode: "test", versions: ["1.5.0", "1.0.1"])
        let devices = try Inventory(parsing: "udp://10.0.0.1:1337 d0\nudp://10.0.0.2:1337 d1\nudp://10.0.0.3:1337 d2")
            .devices
        _ = try await store.prepare(earlier, devices: Array(devices.prefix(2)), retryFailed: false)
        var records = try await store.prepare(later, devices: devices, retryFailed: false)
        records[0].status = .upgraded
        records[1].status = .failed
        try await store.save(Array(records.prefix(2)), rollout: "r2")
        let list = try await store.rollouts()
        #expect(list.map(\.rollout) == [later, earlier])
        #expect(list.first?.counts == [.upgraded: 1, .failed: 1, .pending: 1])
        #expect(list.last?.counts == [.pending: 2])
        #expect(list.first.map { $0.started >= list[1].started } == true)
        // Resumed, the earlier rollout comes first.
        _ = try await store.prepare(earlier, devices: Array(devices.prefix(2)), retryFailed: false)
        #expect(try await store.rollouts().map(\.rollout.id) == ["r1", "r2"])
    }
}
