import ArgumentParser

/// `mcumgr simulator`'s MCUboot: the key it trusts, downgrades, and how its serial recovery is
/// built.
struct SimulatorBootloaderOptions: ParsableArguments {
    @Option(help: "PEM key (public or private) MCUboot trusts; images must then be signed with it.")
    var key: String?

    @Flag(name: .customLong("no-downgrade"), help: "MCUboot refuses downgrades (reported in bootloader info).")
    var noDowngrade = false

    @Flag(
        help: """
            Start in MCUboot's serial recovery (in the firmware loader with --mode firmware-loader), \
            as if the recovery button were held at power-on.
            """
    )
    var recovery = false

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
        name: .customLong("flash-alignment"),
        parsing: .unconditional,
        help: "Flash write alignment serial recovery cuts chunks to (default 8)."
    )
    var flashAlignment: Int?

    /// These options as `sim://` URL options (`SimulatedDevice.Configuration(options:)`); the
    /// key is not one: it is read from its file at start-up.
    var configurationOptions: [String: String] {
        var options: [String: String] = [:]
        if noDowngrade { options["no_downgrade"] = "1" }
        if noSerialRecovery { options["serial_recovery"] = "0" }
        if recovery { options["recovery"] = "1" }
        if recoveryWithoutApplication { options["no_app_recovery"] = "1" }
        if recoveryEcho { options["recovery_echo"] = "1" }
        if recoveryParameters { options["recovery_params"] = "1" }
        if directUpload { options["direct_upload"] = "1" }
        if let flashAlignment { options["flash_align"] = String(flashAlignment) }
        return options
    }
}
