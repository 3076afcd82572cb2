import ArgumentParser
import Foundation
import MCUboot
import MCUmgrConnect
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

    @Option(
        name: .customLong("udp"),
        help: "Serve UDP on HOST:PORT (IPv6 as [::1]:1337; port 0 picks one). Repeatable."
    )
    var udp: [String] = []

    @Flag(help: "Serve a pseudo-terminal (its path is printed).")
    var pty = false

    /// Advertise the simulated device over Bluetooth LE: BlueZ on Linux, CoreBluetooth on macOS.
    @Flag(help: "Advertise the device over Bluetooth LE (BlueZ on Linux, CoreBluetooth on macOS).")
    var ble = false

    @Argument(help: "The name advertised with --ble (default Zephyr).")
    var bleName: String?

    @Option(help: "The Bluetooth adapter --ble uses on Linux, e.g. hci1 (default: the first).")
    var adapter: String?

    @Flag(
        name: .customLong("ble-acquire"),
        help: "Offer BlueZ the AcquireWrite/AcquireNotify socket path (Linux; answered either way)."
    )
    var bleAcquire = false

    @Option(
        name: .customLong("ble-mtu"),
        parsing: .unconditional,
        help: "The largest ATT MTU the Linux peripheral accepts, 23-517; notifications never exceed it."
    )
    var bleMTU: Int = 498

    @Option(help: "Framing on the pseudo-terminal: console or raw.")
    var framing: String = "console"

    @Option(
        parsing: .unconditional,
        help: "Baud rate the pseudo-terminal is paced at (10 bits per byte); 0 for no pacing."
    )
    var baud: Int = 115_200

    @Option(parsing: .unconditional, help: "Number of images (slot pairs), 1-8.")
    var images: Int = 1

    @Option(help: "Bootloader mode: \(BootloaderMode.allCases.map(\.rawValue).joined(separator: ", ")).")
    var mode: String = "swap"

    @Option(
        name: .customLong("buf-size"),
        parsing: .unconditional,
        help: "SMP buffer size (default 2048 when serving UDP, else 384)."
    )
    var bufferSize: Int?

    @Option(name: .customLong("buf-count"), parsing: .unconditional, help: "SMP buffer count.")
    var bufferCount: Int = 4

    @Option(name: .customLong("slot-size"), help: "Slot size in bytes (decimal or 0x hex).")
    var slotSize: String = "0x40000"

    @Option(name: .customLong("state-dir"), help: "Folder that keeps flash, settings and files across runs.")
    var stateDirectory: String?

    @Option(help: "PEM key (public or private) MCUboot trusts; images must then be signed with it.")
    var key: String?

    @Option(
        name: .customLong("latency-ms"),
        parsing: .unconditional,
        help: "Link latency added to every response, in milliseconds."
    )
    var latencyMilliseconds: Int = 0

    @Flag(name: .customLong("no-downgrade"), help: "MCUboot refuses downgrades (reported in bootloader info).")
    var noDowngrade = false

    @Flag(name: .customLong("realistic-timing"), help: "Simulate flash erase/write and swap times of a typical MCU.")
    var realisticTiming = false

    @Option(help: "Answer as this Zephyr release where releases differ: 3.4 (observed, default) or latest.")
    var zephyr: String = "3.4"

    @Option(
        name: .customLong("processing-us"),
        parsing: .unconditional,
        help: "Time the device spends on each request, in microseconds."
    )
    var processingMicroseconds: Int = 800

    @Option(
        name: .customLong("reset-ms"),
        parsing: .unconditional,
        help: "How long the device runs on after answering a reset, in ms."
    )
    var resetMilliseconds: Int = 250

    @Option(
        name: .customLong("boot-ms"),
        parsing: .unconditional,
        help: "How long a reboot takes until the device answers again, in ms."
    )
    var bootMilliseconds: Int = 750

    @Flag(name: .customLong("unlimited-buffers"), help: "An ideal device: no limit on requests held at once.")
    var unlimitedBuffers = false

    @Flag(
        help: """
            Start in MCUboot's serial recovery (in the firmware loader with --mode firmware-loader), \
            as if the recovery button were held at power-on.
            """
    )
    var recovery = false

    @Flag(
        name: .customLong("no-boot-mode"),
        help: "The application has no retention boot mode: os reset ignores boot_mode and just resets."
    )
    var noBootMode = false

    @Flag(
        name: .customLong("recovery-without-app"),
        help: "MCUboot enters serial recovery (or the loader) when nothing valid boots, instead of halting."
    )
    var recoveryWithoutApplication = false

    @Flag(name: .customLong("no-serial-recovery"), help: "MCUboot is built without serial recovery.")
    var noSerialRecovery = false

    @Flag(name: .customLong("recovery-echo"), help: "Serial recovery answers OS echo (BOOT_MGMT_ECHO).")
    var recoveryEcho = false

    @Flag(
        name: .customLong("recovery-params"),
        help: "Serial recovery answers MCUmgr parameters (BOOT_MGMT_MCUMGR_PARAMS)."
    )
    var recoveryParameters = false

    @Flag(
        name: .customLong("direct-upload"),
        help: "Serial recovery uploads to the slot an upload's image names (MCUBOOT_SERIAL_DIRECT_IMAGE_UPLOAD)."
    )
    var directUpload = false

    @Option(
        parsing: .unconditional,
        help: "Serve this many devices over UDP on consecutive ports from --udp's (one URL line each: an inventory)."
    )
    var count: Int?

    @Option(name: .customLong("fault-share"), help: "With --count: the share of devices given a fault (0.1 or 10%).")
    var faultShare: String?

    @Option(
        name: .customLong("fault-seed"),
        parsing: .unconditional,
        help: "With --count: the seed that picks the faulty devices."
    )
    var faultSeed: UInt64 = 1

    @Option(help: "Write what each device received (uploads started, image bytes, resets) to this JSON file at exit.")
    var stats: String?

    @Option(
        name: .customLong("flash-alignment"),
        parsing: .unconditional,
        help: "Flash write alignment serial recovery cuts chunks to (default 8)."
    )
    var flashAlignment: Int?

    func validate() throws {
        try global.refuseClientOptions(
            command: "simulator",
            reason: "it is the device; point clients at the endpoint it prints"
        )
        #if !canImport(CoreBluetooth) && !os(Linux)
            if ble {
                throw ValidationError("--ble needs BlueZ (Linux) or CoreBluetooth (macOS); serve --udp or --pty here")
            }
        #endif
        if !ble {
            if let bleName {
                throw ValidationError("unexpected argument '\(bleName)': a name is given with --ble NAME")
            }
            if adapter != nil { throw ValidationError("--adapter goes with --ble") }
            if bleAcquire { throw ValidationError("--ble-acquire goes with --ble") }
        }
        guard (23...517).contains(bleMTU) else { throw ValidationError("--ble-mtu must be 23-517") }
        if let bleName, bleName.isEmpty || bleName.utf8.count > 29 {
            // 31 bytes of advertising data less the name's length and type bytes.
            throw ValidationError("the --ble name must be 1-29 bytes (it is advertised)")
        }
        guard ["console", "raw"].contains(framing) else { throw ValidationError("--framing must be console or raw") }
        guard baud == 0 || baud >= 300 else { throw ValidationError("--baud must be 0 or at least 300") }
        for endpoint in udp { _ = try Self.parseEndpoint(endpoint) }
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
        var options: [String: String] = [
            "images": String(images), "mode": mode, "buf_count": String(bufferCount), "slot_size": slotSize,
            "latency_ms": String(latencyMilliseconds), "zephyr": zephyr,
            "processing_us": String(processingMicroseconds), "reset_ms": String(resetMilliseconds),
            "boot_ms": String(bootMilliseconds),
        ]
        if unlimitedBuffers { options["buffers"] = "0" }
        let servesUDP = !udp.isEmpty || (!pty && !ble)
        options["buf_size"] = String(bufferSize ?? (servesUDP ? 2048 : 384))
        if let stateDirectory { options["state_dir"] = stateDirectory }
        if noDowngrade { options["no_downgrade"] = "1" }
        if noSerialRecovery { options["serial_recovery"] = "0" }
        if recovery { options["recovery"] = "1" }
        if noBootMode { options["boot_mode"] = "0" }
        if recoveryWithoutApplication { options["no_app_recovery"] = "1" }
        if recoveryEcho { options["recovery_echo"] = "1" }
        if recoveryParameters { options["recovery_params"] = "1" }
        if directUpload { options["direct_upload"] = "1" }
        if let flashAlignment { options["flash_align"] = String(flashAlignment) }
        var configuration: SimulatedDevice.Configuration
        do {
            configuration = try SimulatedDevice.Configuration(
                options: options,
                base: realisticTiming ? .realisticTiming : .udp
            )
        } catch {
            throw ValidationError(error.message)
        }
        if let key, readingKey {
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
        let device = SimulatedDevice(configuration: configuration)
        var running = Running(device: device, udpServers: [], serialServers: [])
        do {
            let endpoints = udp.isEmpty && !pty && !ble ? ["127.0.0.1:1337"] : udp
            for endpoint in endpoints {
                let (host, port) = try Self.parseEndpoint(endpoint)
                let server = try SimulatedUDPServer(device: device, host: host, port: port)
                server.start()
                running.udpServers.append(server)
            }
            if pty {
                let server = try SimulatedSerialServer(
                    device: device,
                    framing: framing == "raw" ? .raw : .console,
                    baudRate: baud == 0 ? nil : baud
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
        if count != nil { return try await runFleet() }
        let running = try start()
        announce(running)
        let name = bleName ?? "Zephyr"
        #if canImport(CoreBluetooth)
            // The peripheral adapter is thin and Apple-only; see docs/BLE.md for what is verified.
            var peripheral: SimulatedPeripheralServer?
            if ble {
                let server = SimulatedPeripheralServer(device: running.device, name: name)
                try await server.start()
                peripheral = server
            }
        #elseif os(Linux)
            var peripheral: SimulatedBlueZPeripheral?
            if ble {
                let server = SimulatedBlueZPeripheral(
                    device: running.device,
                    options: .init(name: name, adapter: adapter, offerAcquire: bleAcquire, maximumMTU: bleMTU)
                )
                do {
                    try await server.start()
                } catch {
                    await running.stop()
                    throw SimulatorError(message: "cannot serve over Bluetooth LE: \(error)")
                }
                peripheral = server
            }
        #endif
        if ble {
            let endpoint = ConnectionURL.ble(name: name, adapter: adapter).description
            Console.out(global.json ? JSONValue.object([("endpoint", .string(endpoint))]).rendered() : endpoint)
        }
        await Self.waitForTerminationSignal()
        #if canImport(CoreBluetooth)
            peripheral?.stop()
        #elseif os(Linux)
            await peripheral?.stop()
        #endif
        try await writeStats([running.device], names: running.endpoints)
        await running.stop()
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
private final class ResumeOnce: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Void, Never>?
    private var resumed = false
    private var sources: [any DispatchSourceSignal] = []

    func wait(_ continuation: CheckedContinuation<Void, Never>) {
        let early = lock.withLock {
            if !resumed { self.continuation = continuation }
            return resumed
        }
        if early { continuation.resume() }
    }

    func keep(_ source: any DispatchSourceSignal) {
        let early = lock.withLock {
            if !resumed { sources.append(source) }
            return resumed
        }
        if early { source.cancel() }
    }

    func resume() {
        let (pending, toCancel) = lock.withLock {
            resumed = true
            defer {
                continuation = nil
                sources = []
            }
            return (continuation, sources)
        }
        for source in toCancel { source.cancel() }
        pending?.resume()
    }
}
