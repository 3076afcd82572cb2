import ArgumentParser
import Foundation
import MCUboot
import MCUmgrConnect
import SMPBytes
import SMPHCIHost
import SMPSimulator

#if canImport(CoreBluetooth)
    import SMPBLETransport
#endif

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `mcumgr simulator`: serves a simulated Zephyr + MCUboot device over UDP and/or a
/// pseudo-terminal until SIGINT or SIGTERM, printing one line per endpoint.
struct SimulatorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "simulator",
        abstract: "Serve a simulated Zephyr + MCUboot device until interrupted.",
        discussion: """
            Prints one line per endpoint it serves, e.g. udp://127.0.0.1:1337 and \
            serial:///dev/pts/3, then serves until SIGINT or SIGTERM. Without --udp or --pty it \
            serves UDP on 127.0.0.1:1337. Point any client at the printed endpoint: \
            mcumgr --conn udp://127.0.0.1:1337 image list, or smpmgr --port /dev/pts/3 os echo hi.
            """
    )

    @OptionGroup var global: LocalOptions

    @OptionGroup(title: "Endpoints") var endpoints: SimulatorEndpointOptions

    @OptionGroup(title: "Device") var device: SimulatorDeviceOptions

    @OptionGroup(title: "MCUboot") var bootloader: SimulatorBootloaderOptions

    @OptionGroup(title: "Timing") var timing: SimulatorTimingOptions

    @OptionGroup(title: "Fleet") var fleet: SimulatorFleetOptions

    func validate() throws {
        try global.refuseClientOptions(
            command: "simulator",
            reason: "it is the device; point clients at the endpoint it prints"
        )
        try endpoints.check()
        try validateFleet()
        // Options only here; files (the key, the state folder) are checked at start-up.
        _ = try deviceConfiguration(readingKey: false)
    }

    /// `HOST:PORT`, `[IPv6]:PORT`, `HOST` (port 1337) or `:PORT` (127.0.0.1).
    static func parseEndpoint(_ text: String) throws -> (host: String, port: UInt16) {
        var host = text
        var port: UInt16 = 1337
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw ValidationError("'\(text)': missing ] after the IPv6 address")
            }
            host = String(text[text.index(after: text.startIndex)..<close])
            let rest = text[text.index(after: close)...]
            if rest.hasPrefix(":") {
                guard let value = UInt16(rest.dropFirst()) else {
                    throw ValidationError("'\(text)': the port must be 0-65535")
                }
                port = value
            } else if !rest.isEmpty {
                throw ValidationError("'\(text)': expected [ADDRESS]:PORT")
            }
        } else if let colon = text.lastIndex(of: ":"), text.firstIndex(of: ":") == colon {
            host = String(text[..<colon])
            guard let value = UInt16(text[text.index(after: colon)...]) else {
                throw ValidationError("'\(text)': the port must be 0-65535")
            }
            port = value
        }
        if host.isEmpty { host = "127.0.0.1" }
        return (host, port)
    }

    /// The device configuration the options describe.
    /// - Parameter readingKey: read and parse `--key` (else it is left out).
    func deviceConfiguration(readingKey: Bool = true) throws -> SimulatedDevice.Configuration {
        // The groups' options are disjoint, so the merge never has to choose.
        let options = device.configurationOptions(servesUDP: endpoints.servesUDP)
            .merging(bootloader.configurationOptions) { first, _ in first }
            .merging(timing.configurationOptions) { first, _ in first }
        var configuration: SimulatedDevice.Configuration
        do {
            configuration = try SimulatedDevice.Configuration(
                options: options,
                base: timing.realisticTiming ? .realisticTiming : .udp
            )
        } catch {
            throw ValidationError(error.message)
        }
        if let key = bootloader.key, readingKey {
            let pem = try readLocalFile(key)
            do {
                configuration.signingKey = try ImagePublicKey(keyFile: pem)
            } catch {
                // `ImagePublicKey` throws only `MCUbootError` (typed throws).
                throw InputFileError(.badData, "--key " + packageProblem(error, name: key))
            }
        }
        return configuration
    }

    /// A started simulator: its endpoints and how to stop it.
    struct Running: Sendable {
        var device: SimulatedDevice
        var udpServers: [SimulatedUDPServer]
        var serialServers: [SimulatedSerialServer]

        /// One URL per endpoint, UDP first.
        var endpoints: [String] { udpServers.map(\.endpointURL) + serialServers.map(\.endpointURL) }

        func stop() async {
            for server in udpServers { await server.stop() }
            for server in serialServers { await server.stop() }
        }
    }

    /// Creates the device and starts every endpoint.
    /// - Throws: a one-line error when the device cannot be served as asked: an address in use,
    ///   a state folder that cannot be written, a key file that cannot be read.
    func start() throws -> Running {
        let configuration = try deviceConfiguration()
        do {
            try configuration.checkStateDirectory()
        } catch {
            throw error.commandFailure(naming: "--state-dir")
        }
        let simulated = SimulatedDevice(configuration: configuration)
        var running = Running(device: simulated, udpServers: [], serialServers: [])
        do {
            for endpoint in endpoints.udpEndpoints {
                let (host, port) = try Self.parseEndpoint(endpoint)
                let server = try SimulatedUDPServer(device: simulated, host: host, port: port)
                server.start()
                running.udpServers.append(server)
            }
            if endpoints.pty {
                let server = try SimulatedSerialServer(
                    device: simulated,
                    framing: endpoints.framing == "raw" ? .raw : .console,
                    baudRate: endpoints.baud == 0 ? nil : endpoints.baud
                )
                server.start()
                running.serialServers.append(server)
            }
        } catch {
            let started = running
            Task { await started.stop() }
            throw SimulatorError(message: "cannot serve: \(error)")
        }
        return running
    }

    /// Prints the endpoints, one per line (a JSON object per line with `--json`).
    func announce(_ running: Running) {
        for endpoint in running.endpoints {
            if global.json {
                Console.out(JSONValue.object([("endpoint", .string(endpoint))]).rendered())
            } else {
                Console.out(endpoint)
            }
        }
    }

    func run() async throws {
        if fleet.count != nil { return try await runFleet() }
        let running = try start()
        announce(running)
        let name = endpoints.bleName ?? "Zephyr"
        let controller = try endpoints.hci.address()
        let hciPeripheral = try await advertise(running, name: name, through: controller)
        #if canImport(CoreBluetooth) || SMP_BLUEZ
            let peripheral = controller == nil ? try await advertise(running, name: name) : nil
        #endif
        if endpoints.ble {
            let endpoint = ConnectionURL.ble(name: name, adapter: endpoints.adapter, hci: controller).description
            Console.out(global.json ? JSONValue.object([("endpoint", .string(endpoint))]).rendered() : endpoint)
        }
        #if SMP_BLUEZ && !canImport(CoreBluetooth)
            let watch = peripheral.map { peripheral in
                Task {
                    guard let reason = await peripheral.busLost() else { return }
                    Console.err(Self.busLostLine(reason, endpoints: running.endpoints))
                }
            }
            defer { watch?.cancel() }
        #endif
        await Self.waitForTerminationSignal()
        await hciPeripheral?.stop()
        #if canImport(CoreBluetooth)
            peripheral?.stop()
        #elseif SMP_BLUEZ
            await peripheral?.stop()
        #endif
        try await writeStats([running.device], names: running.endpoints)
        await running.stop()
    }

    /// With `--ble NAME --hci CONTROLLER`, advertises the device through our own LE host.
    /// - Returns: the advertising peripheral; `nil` without `--hci`.
    /// - Throws: `SimulatorError` when the controller cannot serve it, after stopping the other endpoints.
    private func advertise(
        _ running: Running,
        name: String,
        through controller: HCIControllerAddress?
    ) async throws -> SimulatedHCIPeripheral? {
        guard let controller else { return nil }
        let server = SimulatedHCIPeripheral(device: running.device, name: name, controller: controller)
        do {
            try await server.start()
        } catch {
            await running.stop()
            throw SimulatorError(message: "cannot serve over Bluetooth LE through \(controller): \(error)")
        }
        return server
    }

    #if canImport(CoreBluetooth)
        /// With `--ble`, advertises the device over CoreBluetooth. The peripheral adapter is thin
        /// and Apple-only; see docs/BLE.md for what is verified.
        /// - Returns: the advertising peripheral; `nil` without `--ble`.
        private func advertise(_ running: Running, name: String) async throws -> SimulatedPeripheralServer? {
            guard endpoints.ble else { return nil }
            let server = SimulatedPeripheralServer(device: running.device, name: name)
            try await server.start()
            return server
        }
    #elseif SMP_BLUEZ
        /// With `--ble`, advertises the device through BlueZ.
        /// - Returns: the advertising peripheral; `nil` without `--ble`.
        /// - Throws: `SimulatorError` when BlueZ cannot serve it, after stopping the other endpoints.
        private func advertise(_ running: Running, name: String) async throws -> SimulatedBlueZPeripheral? {
            guard endpoints.ble else { return nil }
            let server = SimulatedBlueZPeripheral(
                device: running.device,
                options: .init(
                    name: name,
                    adapter: endpoints.adapter,
                    offerAcquire: endpoints.bleAcquire,
                    maximumMTU: endpoints.bleMTU
                )
            )
            do {
                try await server.start()
            } catch {
                await running.stop()
                throw SimulatorError(message: "cannot serve over Bluetooth LE: \(error)")
            }
            return server
        }
    #endif

    /// The one line said when the Bluetooth LE peripheral's bus goes away (its dbus-daemon ended,
    /// e.g. `scripts/bluezoo-bus.sh` stopped): the simulator runs on without Bluetooth LE.
    /// - Parameters:
    ///   - reason: why the connection closed.
    ///   - endpoints: the endpoints still served.
    static func busLostLine(_ reason: String, endpoints: [String]) -> String {
        "simulator: \(reason); Bluetooth LE is no longer served"
            + (endpoints.isEmpty ? "" : "; still served: \(endpoints.joined(separator: ", "))")
    }

    /// Suspends until SIGTERM arrives or the task is cancelled, which is what SIGINT does: the
    /// executable owns SIGINT (MCUmgrCLI's `Interrupt` cancels the command). A source of our own
    /// for it set SIGINT to ignored after the executable's source had installed its handler, and
    /// the kernel then dropped every Ctrl-C.
    static func waitForTerminationSignal() async {
        let once = ResumeOnce()
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                once.wait(continuation)
                signal(SIGTERM, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: SIGTERM, queue: .global())
                source.setEventHandler { once.resume() }
                source.resume()
                once.keep(source)
            }
        } onCancel: {
            once.resume()
        }
    }
}

/// The simulator could not start (an address in use, no pseudo-terminal).
struct SimulatorError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Resumes a continuation once, even when told to before it waits (a cancellation may come
/// first), and keeps the signal sources alive meanwhile.
// Safe because all state is behind `state`; unchecked only because Dispatch does not declare
// `DispatchSourceSignal` `Sendable`, though a source may be cancelled from any thread.
private final class ResumeOnce: @unchecked Sendable {
    private struct State {
        var continuation: CheckedContinuation<Void, Never>?
        var resumed = false
        var sources: [any DispatchSourceSignal] = []
    }

    private let state = Locked(State())

    func wait(_ continuation: CheckedContinuation<Void, Never>) {
        let early = state.withLock { state in
            if !state.resumed { state.continuation = continuation }
            return state.resumed
        }
        if early { continuation.resume() }
    }

    func keep(_ source: any DispatchSourceSignal) {
        let early = state.withLock { state in
            if !state.resumed { state.sources.append(source) }
            return state.resumed
        }
        if early { source.cancel() }
    }

    func resume() {
        let (pending, toCancel) = state.withLock { state in
            state.resumed = true
            defer {
                state.continuation = nil
                state.sources = []
            }
            return (state.continuation, state.sources)
        }
        for source in toCancel { source.cancel() }
        pending?.resume()
    }
}
