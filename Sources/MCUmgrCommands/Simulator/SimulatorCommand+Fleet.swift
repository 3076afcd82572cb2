import ArgumentParser
import Foundation
import SMPSimulator

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `mcumgr simulator --count N`: a simulated fleet on consecutive UDP ports.
extension SimulatorCommand {
    func validateFleet() throws {
        guard let count = fleet.count else {
            if fleet.faultShare != nil || fleet.faultSeed != 1 {
                throw ValidationError("--fault-share and --fault-seed need --count")
            }
            return
        }
        guard (1...4096).contains(count) else { throw ValidationError("--count must be between 1 and 4096") }
        guard !endpoints.pty, !endpoints.ble else {
            throw ValidationError("--count serves UDP only; drop --pty and --ble")
        }
        guard endpoints.udp.count <= 1 else {
            throw ValidationError("--count takes one --udp HOST:PORT: the first device's")
        }
        guard device.stateDirectory == nil else {
            throw ValidationError("--count does not keep state (--state-dir): a fleet restarts as made")
        }
        _ = try parsedFaultShare()
    }

    /// `--fault-share` as a fraction: `0.1` or `10%`.
    func parsedFaultShare() throws -> Double {
        guard let faultShare = fleet.faultShare else { return 0 }
        do {
            return try SimulatedFleet.faultShare(parsing: faultShare)
        } catch {
            throw ValidationError("--fault-share: \(error)")
        }
    }

    func runFleet() async throws {
        let (host, port) = try Self.parseEndpoint(endpoints.udp.first ?? "127.0.0.1:1337")
        let simulated: SimulatedFleet
        do {
            simulated = try await SimulatedFleet(
                count: fleet.count ?? 1,
                configuration: try deviceConfiguration(),
                host: host,
                port: port,
                faultShare: try parsedFaultShare(),
                seed: fleet.faultSeed
            )
        } catch {
            throw SimulatorError(message: "cannot serve: \(error)")
        }
        for member in simulated.members {
            if global.json {
                var fields: [(String, JSONValue)] = [("endpoint", .string(member.url)), ("name", .string(member.name))]
                if let fault = member.fault { fields.append(("fault", .string(fault.rawValue))) }
                Console.out(JSONValue.object(fields).rendered())
            } else {
                Console.out(member.inventoryLine)
            }
        }
        // SIGUSR1 writes the counters now, so a test or a script can read them between rollouts.
        let snapshot = statsOnSignal(simulated)
        await Self.waitForTerminationSignal()
        snapshot?.cancel()
        try await writeStats(
            simulated.members.map(\.device),
            names: simulated.members.map(\.name),
            fleet: simulated
        )
        await simulated.stop()
    }

    /// With `--stats`: a SIGUSR1 handler that writes the counters at once (the file is replaced
    /// whole, so a reader never sees half of it).
    func statsOnSignal(_ simulated: SimulatedFleet) -> (any DispatchSourceSignal)? {
        guard let stats = fleet.stats else { return nil }
        signal(SIGUSR1, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
        source.setEventHandler {
            Task {
                guard let data = try? await simulated.countersJSON() else { return }
                try? data.write(to: URL(fileURLWithPath: stats), options: .atomic)
            }
        }
        source.resume()
        return source
    }

    /// Writes `--stats`: what each device received, as JSON.
    func writeStats(_ devices: [SimulatedDevice], names: [String], fleet simulated: SimulatedFleet? = nil) async throws
    {
        guard let stats = fleet.stats else { return }
        let data: Data
        if let simulated {
            data = try await simulated.countersJSON()
        } else {
            var entries: [SimulatedFleet.Counters] = []
            for (device, name) in zip(devices, names) {
                entries.append(.init(name: name, url: name, fault: nil, counters: await device.counters))
            }
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
            data = try encoder.encode(entries)
        }
        do {
            try data.write(to: URL(fileURLWithPath: stats), options: .atomic)
        } catch {
            throw CommandFailure("--stats \(stats): cannot write (\(error.localizedDescription))")
        }
    }
}
