import ArgumentParser
import SMPHCIHost

/// `--hci CONTROLLER` and its UART settings: our own LE host on that controller instead of the
/// system's Bluetooth (`mcumgr ble scan`, `mcumgr simulator --ble`).
struct HCIControllerOptions: ParsableArguments {
    @Option(
        name: .customLong("hci"),
        help: "Use our own LE host on this HCI controller: tcp://HOST:PORT, unix:///PATH or /dev/PATH (H4 over a UART)."
    )
    var controller: String?

    @Option(
        name: .customLong("hci-baud"),
        parsing: .unconditional,
        help: "The --hci UART's baud rate (default 1000000)."
    )
    var baud: Int?

    @Flag(
        name: .customLong("hci-rtscts"),
        inversion: .prefixedNo,
        help: "RTS/CTS flow control on the --hci UART (Zephyr's hci_uart needs it)."
    )
    var rtscts = true

    /// The controller asked for, if any.
    /// - Throws: `ValidationError` naming what is wrong with it.
    func address() throws -> HCIControllerAddress? {
        guard let controller else {
            if baud != nil { throw ValidationError("--hci-baud goes with --hci /dev/PATH") }
            if !rtscts { throw ValidationError("--no-hci-rtscts goes with --hci /dev/PATH") }
            return nil
        }
        do {
            let address = try HCIControllerAddress(parsing: controller, baudRate: baud, hardwareFlowControl: rtscts)
            if !rtscts, case .serial = address {
            } else if !rtscts {
                throw ValidationError("--no-hci-rtscts is for a UART controller, not \(controller)")
            }
            return address
        } catch let error as HCIAddressError {
            throw ValidationError("--hci: \(error)")
        }
    }
}
