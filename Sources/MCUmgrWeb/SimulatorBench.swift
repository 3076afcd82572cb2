import Foundation
import HTTPTypes
import SMPSimulator

/// The simulated devices started from the Simulator screen. They are served over UDP on this
/// machine's loopback, not in-process, so the page's other screens, `mcumgr` and independent
/// clients (smpclient) reach them alike at the URL the page shows; they live as long as the
/// server.
actor SimulatorBench {
    /// The most devices at once: as many as one rollout from the page takes.
    static let deviceLimit = 1024
    /// The most batches at once: each one's devices share one receiving thread.
    static let batchLimit = 32

    /// One simulated device of the bench.
    struct Member: Sendable {
        /// Its name, unique on this server (`sim-001`, …).
        var name: String
        /// Where it answers (`udp://127.0.0.1:PORT`).
        var url: String
        /// The fault it was dealt at its start, if any.
        var fault: SimulatedFleet.FaultKind?
        /// The device.
        var device: SimulatedDevice

        /// Its line of an inventory, as `mcumgr simulator --count` prints it.
        var inventoryLine: String { "\(url) \(name)" + (fault.map { " fault=\($0.rawValue)" } ?? "") }
    }

    /// What a start asks for.
    struct Request: Sendable {
        var count: Int
        var configuration: SimulatedDevice.Configuration
        var faultShare: Double
        var faultKinds: [SimulatedFleet.FaultKind]
        var seed: UInt64
    }

    private var fleets: [SimulatedFleet] = []
    private(set) var members: [Member] = []
    /// Devices being started: counted before the start suspends, so two starts at once cannot
    /// pass the limit together.
    private var reserved = 0
    private var numbered = 0

    /// Starts devices on free loopback ports.
    /// - Parameter request: how many, configured how, which of them faulty.
    /// - Returns: the new devices.
    /// - Throws: `WebError` 409 over the limits, 502 when no port can be bound.
    func start(_ request: Request) async throws -> [Member] {
        let running = members.count + reserved
        guard running + request.count <= Self.deviceLimit else {
            throw WebError(
                .conflict,
                "\(running) simulated devices run; \(request.count) more would pass the page's limit of "
                    + "\(Self.deviceLimit) (stop some first)"
            )
        }
        guard fleets.count < Self.batchLimit else {
            throw WebError(.conflict, "\(fleets.count) starts of devices run, the most the page keeps; stop some first")
        }
        reserved += request.count
        defer { reserved -= request.count }
        let fleet: SimulatedFleet
        do {
            fleet = try await SimulatedFleet(
                count: request.count,
                configuration: request.configuration,
                host: "127.0.0.1",
                port: 0,
                faultShare: request.faultShare,
                faultKinds: request.faultKinds,
                seed: request.seed
            )
        } catch {
            throw WebError(.badGateway, "cannot serve simulated devices on 127.0.0.1: \(error)")
        }
        let started = fleet.members.map { member in
            numbered += 1
            let number = String(numbered)
            // Three digits sort the first 999 as people read them; later names just grow.
            let name = "sim-" + String(repeating: "0", count: max(0, 3 - number.count)) + number
            return Member(name: name, url: member.url, fault: member.fault, device: member.device)
        }
        fleets.append(fleet)
        members += started
        return started
    }

    /// A device by name.
    /// - Throws: `WebError` 404 for a name the bench does not hold.
    func member(_ name: String) throws(WebError) -> Member {
        guard let member = members.first(where: { $0.name == name }) else {
            throw WebError(.notFound, "no simulated device '\(name)' runs on this server")
        }
        return member
    }

    /// Stops every device. The names go on counting, so a URL or name noted before never
    /// names a new device.
    func stopAll() async {
        let stopping = fleets
        fleets = []
        members = []
        for fleet in stopping { await fleet.stop() }
    }

    /// Every device's inventory line.
    var inventory: String { members.map(\.inventoryLine).joined(separator: "\n") }
}
