import ArgumentParser

/// `mcumgr simulator`'s endpoints: where and how the simulated device is served (UDP, a
/// pseudo-terminal, Bluetooth LE).
struct SimulatorEndpointOptions: ParsableArguments {
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

    /// `--hci CONTROLLER`: advertise through our own LE host on that controller instead.
    @OptionGroup var hci: HCIControllerOptions

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

    /// Whether UDP is served: asked for, or the default when no other endpoint is.
    var servesUDP: Bool { !udp.isEmpty || (!pty && !ble) }

    /// The `--udp` endpoints, or the default one when no endpoint is asked for.
    var udpEndpoints: [String] { udp.isEmpty && !pty && !ble ? ["127.0.0.1:1337"] : udp }

    /// Checks the endpoint options among themselves. Called from the command's `validate()`,
    /// after it has refused client options, so that the first problem named stays the same.
    /// - Throws: `ValidationError` naming the first option that is wrong.
    func check() throws {
        let controller = try hci.address()
        #if !canImport(CoreBluetooth) && !SMP_BLUEZ
            if ble, controller == nil {
                throw ValidationError(
                    "--ble needs BlueZ (Linux), CoreBluetooth (macOS) or --hci CONTROLLER; serve --udp or --pty here"
                )
            }
        #endif
        if controller != nil {
            guard ble else { throw ValidationError("--hci goes with --ble NAME") }
            if adapter != nil { throw ValidationError("--adapter is BlueZ's; --hci is our own host's controller") }
            if bleAcquire { throw ValidationError("--ble-acquire is BlueZ's; --hci is our own host's controller") }
        }
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
        for endpoint in udp { _ = try SimulatorCommand.parseEndpoint(endpoint) }
    }
}
