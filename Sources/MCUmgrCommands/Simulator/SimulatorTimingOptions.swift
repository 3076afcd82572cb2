import ArgumentParser

/// `mcumgr simulator`'s timing: the link's latency, the time the device takes per request, to
/// reset and to boot, and flash timing.
struct SimulatorTimingOptions: ParsableArguments {
    @Option(
        name: .customLong("latency-ms"),
        parsing: .unconditional,
        help: "Link latency added to every response, in milliseconds."
    )
    var latencyMilliseconds: Int = 0

    @Flag(name: .customLong("realistic-timing"), help: "Simulate flash erase/write and swap times of a typical MCU.")
    var realisticTiming = false

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

    /// These options as `sim://` URL options (`SimulatedDevice.Configuration(options:)`);
    /// `--realistic-timing` is not one: it picks the configuration they apply to.
    var configurationOptions: [String: String] {
        [
            "latency_ms": String(latencyMilliseconds), "processing_us": String(processingMicroseconds),
            "reset_ms": String(resetMilliseconds), "boot_ms": String(bootMilliseconds),
        ]
    }
}
