import Foundation
import MCUboot
import SMPLink

/// How MCUboot was built for the simulated device: which upgrade strategy it uses.
///
/// The raw value is the name used on the command line and in `sim://?mode=`.
public enum BootloaderMode: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Swap using scratch: test → swap at reset → revert unless confirmed (MCUboot mode 1).
    case swapUsingScratch = "swap-scratch"
    /// Swap using move ("swap without scratch"), Zephyr's long-time default (mode 3). `swap` on
    /// the command line.
    case swapUsingMove = "swap"
    /// Swap using offset (mode 9).
    case swapUsingOffset = "swap-offset"
    /// Overwrite only: the update is copied over the primary slot, no revert (mode 2).
    case overwriteOnly = "overwrite"
    /// DirectXIP without revert: the highest valid version boots from its own slot (mode 4).
    case directXIP = "direct-xip"
    /// DirectXIP with revert: as DirectXIP, but a tested image that was not confirmed is erased
    /// at the next boot (mode 5).
    case directXIPWithRevert = "direct-xip-revert"
    /// RAM load: the highest valid version of the two slots is copied to RAM and runs there; the
    /// application uploads to the slot not running (mode 6). Test and confirm write trailers that
    /// the bootloader does not read.
    case ramLoad = "ram-load"
    /// A single application slot, updated only from MCUboot's serial recovery (mode 0): the
    /// application cannot overwrite the slot it runs from.
    case singleSlot = "single-slot"
    /// Firmware loader (mode 7): one application slot, and a loader application in its own slot
    /// that MCUboot boots on request (boot mode, button) or when the application is invalid; the
    /// loader writes the application slot.
    case firmwareLoader = "firmware-loader"
    /// No bootloader under the application, as on the Zephyr server of `zephyr-observed.md`:
    /// image management writes slots and trailers, but a reset never swaps (a pending image stays
    /// pending) and bootloader info is not supported (`rc 8`).
    case none

    /// The `mode` value of the OS bootloader-info `mode` query (MCUboot `enum mcuboot_mode`).
    public var mcubootModeValue: Int {
        switch self {
        case .singleSlot: 0
        case .swapUsingScratch: 1
        case .overwriteOnly: 2
        case .swapUsingMove: 3
        case .directXIP: 4
        case .directXIPWithRevert: 5
        case .ramLoad: 6
        case .firmwareLoader: 7
        case .swapUsingOffset: 9
        case .none: -1
        }
    }

    /// Whether updates go through the swap decision table (test, permanent, revert).
    public var isSwap: Bool { self == .swapUsingScratch || self == .swapUsingMove || self == .swapUsingOffset }
    /// Whether both slots are executable.
    public var isDirectXIP: Bool { self == .directXIP || self == .directXIPWithRevert }
    /// Whether each image has only one application slot.
    public var isSingleSlot: Bool { self == .singleSlot || self == .firmwareLoader }

    /// Parses a mode name; also accepts `swap-move`, `swap-using-move`, `overwrite-only`,
    /// `directxip` and similar spellings.
    /// - Parameter name: the name.
    public init?(name: String) {
        let key = name.lowercased().replacingOccurrences(of: "_", with: "-")
        if let mode = BootloaderMode(rawValue: key) {
            self = mode
            return
        }
        switch key {
        case "swap-move", "swap-using-move", "move": self = .swapUsingMove
        case "swap-using-scratch", "scratch": self = .swapUsingScratch
        case "swap-using-offset", "offset": self = .swapUsingOffset
        case "overwrite-only", "upgrade-only": self = .overwriteOnly
        case "directxip", "direct-xip-without-revert": self = .directXIP
        case "directxip-revert", "direct-xip-with-revert": self = .directXIPWithRevert
        case "single", "single-app", "single-application": self = .singleSlot
        case "loader", "fw-loader": self = .firmwareLoader
        case "ramload", "ram", "ram-loader": self = .ramLoad
        case "no-bootloader", "no": self = .none
        default: return nil
        }
    }

    public var description: String { rawValue }
}

/// Which Zephyr release's answers the simulated device gives where releases differ.
///
/// The default is the release a real server was observed running (`zephyr-observed.md`); the
/// newer behaviour, read in Zephyr's sources, is an option. docs/SIMULATOR.md lists each
/// difference.
public enum ZephyrRelease: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Zephyr 3.4 as observed: erasing a slot that does not exist answers FLASH_OPEN_FAILED (10),
    /// erasing a blank slot UNKNOWN (1); a missing statistics group answers in group 63; the
    /// statistics answers carry `rc: 0`; bootloader info never reports `no-downgrade`.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // A release number reads as one: `v3_4`, not `v34`.
    case v3_4 = "3.4"
    /// Zephyr's main branch (2026): INVALID_SLOT (14) for a missing slot, success for a blank one,
    /// statistics errors in the statistics group, no `rc` in success answers, `no-downgrade`
    /// reported.
    case latest

    public var description: String { rawValue }

    /// The kernel version the device reports (`os info`, the shell's `kernel version`): the
    /// release it answers as, so that no answer names another.
    public var kernelVersion: String {
        switch self {
        case .v3_4: "3.4.0"
        case .latest: "4.2.0"
        }
    }
}

extension SimulatedDevice {
    /// Everything that shapes a simulated device: its buffers, its bootloader, its flash and its
    /// link. Values are plain data, so a configuration can be built, compared and printed.
    ///
    /// The defaults are the strictest real device we know (`zephyr-observed.md`): four 2048-byte
    /// buffers shared by requests and responses, a 1500-byte UDP receive buffer, 0.8 ms per
    /// request, and a reset that answers, runs on for 250 ms and is back after about a second.
    public struct Configuration: Sendable {
        /// The clock every delay of the device runs on — processing, flash, reset, boot, link
        /// latency: real time by default, a test clock that a test advances by hand in tests that
        /// check the device honours them.
        public var clock: SMPClock = .continuous
        /// Told whenever the device takes a request in hand and when it is done with it, so that
        /// it stands still while the device works (``QuietClock``); `nil`: nobody is told. The
        /// device's own delays stay on ``clock``, which must not be this clock: it would wait for
        /// itself.
        public var quietClock: QuietClock?
        /// `CONFIG_MCUMGR_TRANSPORT_NETBUF_SIZE`: the largest SMP frame (header included) the device
        /// accepts; larger requests are dropped. Zephyr's default is 384, or 2048 with UDP.
        public var bufferSize: Int
        /// `CONFIG_MCUMGR_TRANSPORT_NETBUF_COUNT`: the buffers every request and every response
        /// takes one of (see ``limitsBuffers``).
        public var bufferCount: Int
        /// Model Zephyr's buffer pool: a request that arrives when all ``bufferCount`` buffers are
        /// held is dropped unanswered, and one whose answer finds no free buffer is answered
        /// `{"rc": 2}` (ENOMEM) instead of being processed. `false` gives an ideal device with as
        /// many buffers as requests, for comparisons.
        public var limitsBuffers: Bool
        /// Time the SMP work queue spends on each request before it takes a buffer for the answer
        /// (requests arriving meanwhile wait in their buffers). 0.8 ms is what the observed server
        /// took per upload chunk.
        public var requestProcessingTime: Duration
        /// `CONFIG_MCUMGR_GRP_OS_RESET_MS`: after answering `os reset` the device keeps running
        /// (and answering) this long before it reboots. Zero reboots it as the answer goes out,
        /// before it takes another request: no request ever races the reboot.
        public var resetDelay: Duration
        /// From the reboot until the SMP server answers again (requests meanwhile are lost).
        public var bootTime: Duration
        /// Which release's answers to give where Zephyr releases differ.
        public var release: ZephyrRelease
        /// Number of images (slot pairs), 1…8.
        public var imageCount: Int
        /// The bootloader's upgrade strategy.
        public var bootloaderMode: BootloaderMode
        /// Size of each slot in bytes.
        public var slotSize: Int
        /// MCUboot's `MCUBOOT_DOWNGRADE_PREVENTION`, enforced at boot in the swap and
        /// overwrite-only modes (an older image in the secondary slot is erased, the primary
        /// boots) and reported as `no-downgrade` by bootloader info from Zephyr 3.7 on
        /// (``ZephyrRelease/latest``). DirectXIP modes always boot the highest version and report
        /// `no-downgrade` whatever this says, as newer Zephyr does.
        public var downgradePrevention: Bool
        /// The key MCUboot trusts; with a key, images must carry a valid signature from it.
        /// Without one only the magic and the TLV hash are checked.
        public var signingKey: ImagePublicKey?
        /// `CONFIG_IMG_ENABLE_IMAGE_CHECK`: the last upload response carries `match`.
        public var imageCheck: Bool
        /// Zephyr's `…ALLOW_CONFIRM_NON_ACTIVE_IMAGE_SECONDARY`: confirming a non-running slot by
        /// hash (a permanent swap) is allowed; when false it is refused with
        /// `IMAGE_CONFIRMATION_DENIED`.
        public var allowConfirmNonActive: Bool
        /// `CONFIG_MCUMGR_GRP_FS_HASH_SHA256`: the file-system hash command offers `sha256` as
        /// well as `crc32` (the observed server had `crc32` only).
        public var fileHashSHA256: Bool
        /// `CONFIG_MCUMGR_SMP_LEGACY_RC_BEHAVIOUR`: every success answer carries `"rc": 0`.
        public var legacyReturnCodes: Bool
        /// Serve Apache Mynewt's log group (4) with a reboot log, for clients' log views: no
        /// Zephyr has it, so it is off unless asked for (`mynewt_logs`).
        public var mynewtLogs = false
        /// Answer with indefinite-length maps and arrays, as Zephyr's zcbor does; `false` writes
        /// definite lengths.
        public var zcborIndefiniteMaps: Bool
        /// Flash erase speed in bytes per second; `nil` for instant (the default, for tests).
        public var eraseBytesPerSecond: Double?
        /// Flash write speed in bytes per second; `nil` for instant.
        public var writeBytesPerSecond: Double?
        /// Time a swap takes at reset, per byte of image swapped; `nil` for instant.
        public var swapBytesPerSecond: Double?
        /// One-way link latency added to every response.
        public var linkLatency: Duration
        /// `CONFIG_MCUMGR_TRANSPORT_UDP_MTU`: the UDP receive buffer. A longer datagram is cut to
        /// it, and SMP then answers `rc 9` (ECORRUPT) because its header announces more.
        public var maximumDatagramSize: Int
        /// A folder that keeps flash, settings and files across runs; `nil` keeps everything in
        /// memory (files then live in a temporary folder removed with the device).
        public var stateDirectory: URL?
        /// The node name reported by OS application info (`n`).
        public var nodeName: String
        /// The version of the factory image the device starts with in slot 0 of every image.
        public var factoryVersion: String
        /// Reject resets unless `force` is set, as an application reset hook may (`EBUSY`).
        public var rejectResetUnlessForced: Bool
        /// MCUboot's serial recovery as built into the bootloader; `nil` for a bootloader without
        /// it. Not used in the firmware-loader mode (the loader application takes its place) or
        /// without a bootloader (``BootloaderMode/none``).
        public var serialRecovery: SerialRecoveryConfiguration?
        /// `CONFIG_MCUMGR_GRP_OS_RESET_BOOT_MODE` with a retention boot-mode area that MCUboot reads
        /// (`CONFIG_BOOT_SERIAL_BOOT_MODE`, `CONFIG_BOOT_FIRMWARE_LOADER_BOOT_MODE`; Zephyr ≥ 4.2):
        /// `os reset` with `boot_mode: 1` makes the next boot enter serial recovery or the
        /// firmware loader. Without it the key is ignored and the device just resets.
        public var retentionBootMode: Bool
        /// `BOOT_SERIAL_NO_APPLICATION` / `BOOT_FIRMWARE_LOADER_NO_APPLICATION`: with nothing valid
        /// to boot, MCUboot enters serial recovery (or the loader) instead of hanging. Off by
        /// default: a device that hangs can only be revived by the recovery button.
        public var recoveryWithoutApplication: Bool
        /// Start in serial recovery (or the firmware loader), as a device powered on with its
        /// recovery button held.
        public var startsInRecovery: Bool
        /// Seed for every random choice (faults, session ids), so runs replay.
        public var seed: UInt64

        /// Creates a configuration; every default is the observed Zephyr server's.
        public init(
            bufferSize: Int = 2048,
            bufferCount: Int = 4,
            limitsBuffers: Bool = true,
            requestProcessingTime: Duration = .microseconds(800),
            resetDelay: Duration = .milliseconds(250),
            bootTime: Duration = .milliseconds(750),
            release: ZephyrRelease = .v3_4,
            imageCount: Int = 1,
            bootloaderMode: BootloaderMode = .swapUsingMove,
            slotSize: Int = 0x40000,
            downgradePrevention: Bool = false,
            signingKey: ImagePublicKey? = nil,
            imageCheck: Bool = true,
            allowConfirmNonActive: Bool = true,
            fileHashSHA256: Bool = false,
            legacyReturnCodes: Bool = false,
            zcborIndefiniteMaps: Bool = true,
            eraseBytesPerSecond: Double? = nil,
            writeBytesPerSecond: Double? = nil,
            swapBytesPerSecond: Double? = nil,
            linkLatency: Duration = .zero,
            maximumDatagramSize: Int = 1500,
            stateDirectory: URL? = nil,
            nodeName: String = "zephyr",
            factoryVersion: String = "1.0.0",
            rejectResetUnlessForced: Bool = false,
            serialRecovery: SerialRecoveryConfiguration? = SerialRecoveryConfiguration(),
            retentionBootMode: Bool = true,
            recoveryWithoutApplication: Bool = false,
            startsInRecovery: Bool = false,
            seed: UInt64 = 0x5EED
        ) {
            self.bufferSize = bufferSize
            self.bufferCount = max(1, bufferCount)
            self.limitsBuffers = limitsBuffers
            self.requestProcessingTime = max(.zero, requestProcessingTime)
            self.resetDelay = max(.zero, resetDelay)
            self.bootTime = max(.zero, bootTime)
            self.release = release
            self.imageCount = max(1, min(8, imageCount))
            self.bootloaderMode = bootloaderMode
            self.slotSize = slotSize
            self.downgradePrevention = downgradePrevention
            self.signingKey = signingKey
            self.imageCheck = imageCheck
            self.allowConfirmNonActive = allowConfirmNonActive
            self.fileHashSHA256 = fileHashSHA256
            self.legacyReturnCodes = legacyReturnCodes
            self.zcborIndefiniteMaps = zcborIndefiniteMaps
            self.eraseBytesPerSecond = eraseBytesPerSecond
            self.writeBytesPerSecond = writeBytesPerSecond
            self.swapBytesPerSecond = swapBytesPerSecond
            self.linkLatency = linkLatency
            self.maximumDatagramSize = maximumDatagramSize
            self.stateDirectory = stateDirectory
            self.nodeName = nodeName
            self.factoryVersion = factoryVersion
            self.rejectResetUnlessForced = rejectResetUnlessForced
            self.serialRecovery = serialRecovery
            self.retentionBootMode = retentionBootMode
            self.recoveryWithoutApplication = recoveryWithoutApplication
            self.startsInRecovery = startsInRecovery
            self.seed = seed
        }

        /// A Zephyr device reached over UDP: 2048-byte buffers (`smp_svr` with UDP).
        public static var udp: Configuration { Configuration() }

        /// A Zephyr device on a UART with the defaults (384-byte buffers, 4 of them).
        public static var serial: Configuration {
            Configuration(bufferSize: 384, bufferCount: 4)
        }

        /// The Zephyr defaults (384-byte buffers) with flash timing of a typical nRF52 (erase
        /// ~45 kB/s, write ~90 kB/s) and a 5 ms link.
        public static var realisticTiming: Configuration {
            Configuration(
                bufferSize: 384,
                eraseBytesPerSecond: 45_000,
                writeBytesPerSecond: 90_000,
                swapBytesPerSecond: 30_000,
                linkLatency: .milliseconds(5)
            )
        }

        /// Checks that ``stateDirectory`` (if set) is a folder that can be created and written,
        /// and that the flash saved there, if any, is whole.
        /// - Throws: ``ConfigurationError`` naming the folder and the reason.
        public func checkStateDirectory() throws(ConfigurationError) {
            guard let stateDirectory else { return }
            let store = StateDirectory(url: stateDirectory)
            try store.prepare()
            _ = try store.loadFlash(configuration: self)
        }

        /// Whether bootloader info (OS command 8) exists: not without a bootloader.
        var hasBootloaderInfo: Bool { bootloaderMode != .none }

        /// Whether `no-downgrade` is reported: DirectXIP modes always (they boot the highest
        /// version), the others when downgrade prevention is built in — but only by newer Zephyr:
        /// a missing `CONFIG_` prefix kept it from ever being sent before 3.7.
        var reportsNoDowngrade: Bool {
            release != .v3_4 && (bootloaderMode.isDirectXIP || downgradePrevention)
        }

        /// How MCUboot can be told to stop in recovery, as the bootloader model needs it.
        var recoveryEntry: MCUbootModel.RecoveryEntry {
            MCUbootModel.RecoveryEntry(
                serialRecovery: serialRecovery != nil && bootloaderMode != .none && bootloaderMode != .firmwareLoader,
                bootMode: retentionBootMode && bootloaderMode != .none,
                withoutApplication: recoveryWithoutApplication
            )
        }
    }
}

extension SimulatedDevice.Configuration {
    /// Reads a configuration from `key=value` options, as in `sim://?images=2&mode=overwrite`:
    /// `images`, `mode`, `buf_size`, `buf_count`, `slot_size` (decimal or `0x` hex), `state_dir`,
    /// `latency_ms`, `no_downgrade`, `seed`, `version` (of the factory image), `zephyr` (`3.4` or
    /// `latest`), `processing_us`, `reset_ms`, `boot_ms`, `buffers` (`0` for an unlimited pool),
    /// `fs_sha256`; MCUboot recovery: `recovery` (start in it), `boot_mode` (`0`: no retention
    /// boot mode), `no_app_recovery`, `serial_recovery` (`0`: built without it), `recovery_echo`,
    /// `recovery_params`, `direct_upload`, `recovery_buf`, `flash_align`.
    /// Unknown keys are refused so typos do not pass silently.
    /// - Parameters:
    ///   - options: the options.
    ///   - base: the configuration the options modify.
    /// - Throws: ``ConfigurationError`` naming the bad option.
    public init(options: [String: String], base: SimulatedDevice.Configuration = .udp) throws(ConfigurationError) {
        self = base
        func integer(_ key: String, _ text: String, range: ClosedRange<Int>) throws(ConfigurationError) -> Int {
            let value = text.lowercased().hasPrefix("0x") ? Int(text.dropFirst(2), radix: 16) : Int(text)
            guard let value, range.contains(value) else {
                throw ConfigurationError(
                    "\(key)=\(text): expected a number in \(range.lowerBound)...\(range.upperBound)"
                )
            }
            return value
        }
        func flag(_ text: String) -> Bool { text != "0" && text.lowercased() != "false" }
        // `no-downgrade` and `no_downgrade` are one option: spelled one way from here on.
        var spelled: [String: String] = [:]
        for (key, value) in options {
            let key = key.replacingOccurrences(of: "-", with: "_")
            guard spelled.updateValue(value, forKey: key) == nil else {
                throw ConfigurationError("\(key) is given twice")
            }
        }
        // `serial_recovery` comes first: it decides whether the recovery options after it have a
        // serial recovery to modify (a base without one would drop them).
        let first = "serial_recovery"
        for (key, value) in spelled.sorted(by: { ($0.key == first ? 0 : 1, $0.key) < ($1.key == first ? 0 : 1, $1.key) }
        ) {
            switch key {
            case "images": imageCount = try integer(key, value, range: 1...8)
            case "mode":
                guard let mode = BootloaderMode(name: value) else {
                    throw ConfigurationError(
                        "mode=\(value): expected one of \(BootloaderMode.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                bootloaderMode = mode
            case "buf_size": bufferSize = try integer(key, value, range: 64...65_535)
            case "buf_count": bufferCount = try integer(key, value, range: 1...64)
            case "slot_size": slotSize = try integer(key, value, range: 0x1000...0x1000_0000)
            case "state_dir": stateDirectory = URL(fileURLWithPath: value, isDirectory: true)
            case "latency_ms": linkLatency = .milliseconds(try integer(key, value, range: 0...60_000))
            case "no_downgrade": downgradePrevention = flag(value)
            case "seed": seed = UInt64(try integer(key, value, range: 0...Int.max))
            case "zephyr":
                guard let release = ZephyrRelease(rawValue: value.lowercased()) else {
                    throw ConfigurationError(
                        "zephyr=\(value): expected one of \(ZephyrRelease.allCases.map(\.rawValue).joined(separator: ", "))"
                    )
                }
                self.release = release
            case "processing_us":
                requestProcessingTime = .microseconds(try integer(key, value, range: 0...10_000_000))
            case "reset_ms": resetDelay = .milliseconds(try integer(key, value, range: 0...600_000))
            case "boot_ms": bootTime = .milliseconds(try integer(key, value, range: 0...600_000))
            case "buffers": limitsBuffers = flag(value)
            case "fs_sha256": fileHashSHA256 = flag(value)
            case "mynewt_logs": mynewtLogs = flag(value)
            case "recovery": startsInRecovery = flag(value)
            case "boot_mode": retentionBootMode = flag(value)
            case "no_app_recovery": recoveryWithoutApplication = flag(value)
            case "serial_recovery": serialRecovery = flag(value) ? (serialRecovery ?? .init()) : nil
            case "recovery_echo": serialRecovery?.echo = flag(value)
            case "recovery_params": serialRecovery?.mcumgrParameters = flag(value)
            case "direct_upload": serialRecovery?.directImageUpload = flag(value)
            case "recovery_buf":
                serialRecovery?.receiveBufferSize = try integer(key, value, range: 128...65_535)
            case "flash_align": serialRecovery?.flashAlignment = try integer(key, value, range: 1...512)
            case "version":
                guard ImageVersion(value) != nil else {
                    throw ConfigurationError("version=\(value): expected e.g. 1.0.0")
                }
                factoryVersion = value
            default:
                throw ConfigurationError("unknown simulator option '\(key)'")
            }
        }
        try checkRecovery(spelled)
    }

    /// Refuses recovery options that contradict the bootloader, rather than ignoring them.
    /// - Parameter options: the options, keys spelled with `_`.
    private func checkRecovery(_ options: [String: String]) throws(ConfigurationError) {
        let recoveryOptions = ["recovery_echo", "recovery_params", "direct_upload", "recovery_buf", "flash_align"]
        let built = serialRecovery != nil && bootloaderMode != .none && bootloaderMode != .firmwareLoader
        if let given = recoveryOptions.first(where: { options[$0] != nil }), !built {
            throw ConfigurationError("\(given): the \(bootloaderMode) bootloader has no serial recovery")
        }
        if startsInRecovery && !built && bootloaderMode != .firmwareLoader {
            throw ConfigurationError("recovery: the \(bootloaderMode) bootloader has no serial recovery to start in")
        }
        if bootloaderMode == .firmwareLoader && imageCount > 1 {
            throw ConfigurationError("images=\(imageCount): the firmware-loader mode updates one image")
        }
    }
}

/// A simulator option, or a state folder, that could not be used.
public struct ConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What the error is about, for callers that answer each differently (the CLI's exit status).
    public enum Subject: Sendable, Hashable {
        /// An option: unknown, out of range, or not possible with the others.
        case option
        /// A state folder that cannot be created or written.
        case stateFolder
        /// Flash saved in a state folder that is damaged (cut short, edited by hand).
        case savedFlash
    }

    /// What was wrong and what is accepted.
    public var message: String
    /// What the error is about.
    public var subject: Subject
    /// Creates an error.
    /// - Parameters:
    ///   - message: what was wrong and what is accepted.
    ///   - subject: what the error is about.
    public init(_ message: String, subject: Subject = .option) {
        self.message = message
        self.subject = subject
    }
    public var description: String { message }
}
