import ArgumentParser

/// `mcumgr simulator`'s fleet: many devices on consecutive UDP ports, some given faults, and the
/// counters of what each received.
struct SimulatorFleetOptions: ParsableArguments {
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
}
