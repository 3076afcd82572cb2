import ArgumentParser
import SMPSimulator

/// `mcumgr simulator`'s device: its images and slots, its SMP buffers, where it keeps its state,
/// and which Zephyr it answers as.
struct SimulatorDeviceOptions: ParsableArguments {
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

    @Option(help: "Answer as this Zephyr release where releases differ: 3.4 (observed, default) or latest.")
    var zephyr: String = "3.4"

    @Flag(name: .customLong("unlimited-buffers"), help: "An ideal device: no limit on requests held at once.")
    var unlimitedBuffers = false

    @Flag(
        name: .customLong("no-boot-mode"),
        help: "The application has no retention boot mode: os reset ignores boot_mode and just resets."
    )
    var noBootMode = false

    /// These options as `sim://` URL options (`SimulatedDevice.Configuration(options:)`).
    /// - Parameter servesUDP: whether UDP is served, which sets the default buffer size: a
    ///   datagram takes a whole frame, a serial line or BLE a small one.
    func configurationOptions(servesUDP: Bool) -> [String: String] {
        var options: [String: String] = [
            "images": String(images), "mode": mode, "buf_count": String(bufferCount), "slot_size": slotSize,
            "zephyr": zephyr, "buf_size": String(bufferSize ?? (servesUDP ? 2048 : 384)),
        ]
        if unlimitedBuffers { options["buffers"] = "0" }
        if let stateDirectory { options["state_dir"] = stateDirectory }
        if noBootMode { options["boot_mode"] = "0" }
        return options
    }
}
