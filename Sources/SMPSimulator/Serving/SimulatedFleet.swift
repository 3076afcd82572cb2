import Foundation
import SMPPOSIX

/// Many simulated devices served over UDP on consecutive ports, some of them faulty by a seeded
/// draw: the fleet that `mcumgr simulator --count N` serves and that fleet tests and benchmarks
/// run rollouts against.
///
/// ```swift
/// let fleet = try await SimulatedFleet(count: 200, host: "127.0.0.1", port: 0, faultShare: 0.1, seed: 7)
/// print(fleet.inventory)               // one line per device: URL, name, fault=… when faulty
/// let counters = await fleet.counters()  // what each device received
/// await fleet.stop()
/// ```
public final class SimulatedFleet: Sendable {
    /// How a simulated device of a fleet misbehaves.
    public enum FaultKind: String, Sendable, Hashable, CaseIterable, Codable {
        /// Never answers: its port is bound, nothing reads it.
        case dead
        /// Refuses every image upload (`FLASH_OPEN_FAILED`).
        case refusing
        /// Loses power during its first upload (after 2 KiB): RAM state lost, the upload starts over.
        case powerLoss = "power-loss"
        /// Answers five times later and works four times slower than the others.
        case slow
    }

    /// One device of the fleet.
    public struct Member: Sendable {
        /// Its name (`sim-001`, …).
        public var name: String
        /// Its URL (`udp://127.0.0.1:1400`).
        public var url: String
        /// Its fault, if any.
        public var fault: FaultKind?
        /// The device.
        public var device: SimulatedDevice
        /// The server that serves it (its clients: ``SimulatedUDPServer/clients``).
        public let server: SimulatedUDPServer

        /// The member as an inventory line: URL, name, and `fault=KIND` when faulty.
        public var inventoryLine: String { "\(url) \(name)" + (fault.map { " fault=\($0.rawValue)" } ?? "") }
    }

    /// The devices, in port order.
    public let members: [Member]
    /// One thread receives for every device, asleep while nobody talks to the fleet.
    private let receiver: UDPReceiveLoop

    /// Creates and starts the devices.
    /// - Parameters:
    ///   - count: how many devices.
    ///   - configuration: every device's configuration (slow ones are slowed from it).
    ///   - host: the address to serve on.
    ///   - port: the first device's port; the others follow it (0: ports the system picks).
    ///   - faultShare: the share of devices (0…1) given a fault, drawn with `seed`.
    ///   - faultKinds: the faults dealt, in turn, to the devices drawn.
    ///   - seed: the draw's seed: the same seed picks the same devices.
    /// - Throws: `SystemCallError` when a port cannot be bound (the devices started are stopped).
    public init(
        count: Int,
        configuration: SimulatedDevice.Configuration = .udp,
        host: String = "127.0.0.1",
        port: UInt16 = 0,
        faultShare: Double = 0,
        faultKinds: [FaultKind] = FaultKind.allCases,
        seed: UInt64 = 1
    ) async throws {
        let faults = Self.draw(count: count, share: faultShare, kinds: faultKinds, seed: seed)
        let width = max(3, String(count).count)
        let receiver = try UDPReceiveLoop(name: "smp-simulator-fleet")
        var members: [Member] = []
        do {
            for index in 0..<count {
                let fault = faults[index]
                var device = configuration
                if fault == .slow {
                    device.linkLatency = device.linkLatency * 5
                    device.requestProcessingTime = device.requestProcessingTime * 4
                }
                let simulated = SimulatedDevice(configuration: device)
                switch fault {
                case .refusing: await simulated.inject(.refuseUploads(returnCode: 10))
                case .powerLoss: await simulated.inject(.powerLoss(.duringUpload(atOffset: 2048)))
                case .dead, .slow, nil: break
                }
                let next = port == 0 ? 0 : port &+ UInt16(truncatingIfNeeded: index)
                let server = try SimulatedUDPServer(device: simulated, host: host, port: next, receiver: receiver)
                if fault != .dead { server.start() }
                let number = String(index + 1)
                let name = "sim-" + String(repeating: "0", count: max(0, width - number.count)) + number
                members.append(
                    Member(name: name, url: server.endpointURL, fault: fault, device: simulated, server: server)
                )
            }
        } catch {
            for member in members { await member.server.stop() }
            receiver.stop()
            throw error
        }
        self.members = members
        self.receiver = receiver
    }

    deinit {
        receiver.stop()
    }

    /// A share of devices to make faulty as people write it: `0.1` or `10%`.
    /// - Parameter text: the share.
    /// - Returns: the share, 0…1.
    /// - Throws: ``ConfigurationError`` saying what is accepted.
    public static func faultShare(parsing text: String) throws(ConfigurationError) -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let percent = trimmed.hasSuffix("%")
        guard let value = Double(percent ? String(trimmed.dropLast()) : trimmed), value.isFinite else {
            throw ConfigurationError("'\(trimmed)' is not a share (0.1 or 10%)")
        }
        let share = percent ? value / 100 : value
        guard (0...1).contains(share) else {
            throw ConfigurationError("'\(trimmed)' is not between 0 and 1 (0% and 100%)")
        }
        return share
    }

    /// Which devices get which fault: `round(share × count)` devices drawn without replacement
    /// by a seeded shuffle, dealt the kinds in turn.
    static func draw(count: Int, share: Double, kinds: [FaultKind], seed: UInt64) -> [FaultKind?] {
        var faults = [FaultKind?](repeating: nil, count: count)
        guard !kinds.isEmpty, share > 0 else { return faults }
        let faulty = min(count, Int((Double(count) * min(1, share)).rounded()))
        var random = SeededRandom(seed: seed)
        let chosen = Array(0..<count).shuffled(using: &random).prefix(faulty)
        for (turn, index) in chosen.sorted().enumerated() { faults[index] = kinds[turn % kinds.count] }
        return faults
    }

    /// The inventory: one line per device.
    public var inventory: String { members.map(\.inventoryLine).joined(separator: "\n") + "\n" }

    /// Every device's counters, in port order, with its clients' spans (seconds since the fleet
    /// started).
    public func counters() async -> [Counters] {
        var all: [Counters] = []
        for member in members {
            var entry = Counters(
                name: member.name,
                url: member.url,
                fault: member.fault,
                counters: await member.device.counters
            )
            entry.clients = member.server.clients.map {
                .init(
                    address: $0.address,
                    first: Self.seconds($0.first - started),
                    last: Self.seconds($0.last - started),
                    datagrams: $0.datagrams
                )
            }
            all.append(entry)
        }
        return all
    }

    private let started = ContinuousClock.now

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// One device's counters, with who it is.
    public struct Counters: Sendable, Hashable, Codable {
        /// The device's name.
        public var name: String
        /// Its URL.
        public var url: String
        /// Its fault, if any.
        public var fault: FaultKind?
        /// What it received.
        public var counters: SimulatedDevice.Counters
        /// The client sockets that sent it datagrams: when (seconds since the fleet started).
        public var clients: [Client] = []

        /// One client socket's datagrams.
        public struct Client: Sendable, Hashable, Codable {
            /// Its address and port.
            public var address: String
            /// Its first datagram.
            public var first: Double
            /// Its last datagram.
            public var last: Double
            /// How many.
            public var datagrams: Int
        }

        /// Creates an entry.
        public init(name: String, url: String, fault: FaultKind?, counters: SimulatedDevice.Counters) {
            self.name = name
            self.url = url
            self.fault = fault
            self.counters = counters
        }
    }

    /// The counters as JSON: an array of objects, one per device.
    public func countersJSON() async throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        return try encoder.encode(await counters())
    }

    /// Stops every server.
    public func stop() async {
        for member in members { await member.server.stop() }
        receiver.stop()
    }
}
