import Foundation
import MCUmgr

extension FirmwareUpgrade {
    /// What an upgrade does once the images are on the device. The exact commands of each mode
    /// are listed in `docs/UPGRADE.md`; ``FirmwareUpgradePlan/steps`` lists them for one upgrade.
    public enum Mode: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Upload, mark the images for test (one boot), reset, reconnect, check that the new images
        /// run, then confirm them and check that they are confirmed. Use it when the new firmware
        /// answers SMP: an image that does not come up is reverted by MCUboot at the next reset.
        case testAndConfirm = "test-and-confirm"
        /// Upload, confirm the images (permanent, no revert), reset, reconnect, check that they run
        /// confirmed. Use it when the new firmware may not answer SMP after the reset (the safe
        /// default of Nordic's libraries).
        case confirmOnly = "confirm-only"
        /// Upload, mark for test, reset, reconnect, check that the new images run (unconfirmed):
        /// the application confirms itself, or MCUboot reverts at the next reset.
        case testOnly = "test-only"
        /// Upload only and check that the images are on the device: no state change, no reset, on
        /// every bootloader. A slot held by an image the bootloader acts on at the next reset (the
        /// revert target of a running test image, an image marked for the next boot) is refused
        /// with ``FirmwareUpgradeError/Code/slotBusy``, never freed by a reset. (On DirectXIP the
        /// next reset boots the highest version: the upload is installed by whoever resets.)
        case uploadOnly = "upload-only"

        public var description: String { rawValue }
    }

    /// Everything that shapes one upgrade. A value with a defaulted memberwise initializer, so a
    /// caller only names what differs.
    public struct Configuration: Sendable, Hashable {
        /// What happens after the upload.
        public var mode: Mode
        /// Upload requests in flight at once, forced; `nil` derives it from the device
        /// (`buf_count − 1`) and adapts it to back-pressure.
        public var window: Int?
        /// Round upload chunks down to a multiple of this (the flash write alignment of old
        /// devices); 1 = none.
        public var byteAlignment: Int
        /// The largest SMP frame the device reassembles, if smaller than the link's and the
        /// device's `buf_size` (e.g. a BLE peripheral without reassembly); `nil` = as the client.
        public var reassemblyBufferSize: Int?
        /// Erase the application's settings storage (Zephyr basic group) after the upload.
        public var eraseAppSettings: Bool
        /// How long the bootloader needs to swap after a reset; reconnecting starts after it
        /// (DirectXIP does not swap and does not wait).
        public var estimatedSwapTime: Duration
        /// Timeout of the first chunk of each image, during which the device may erase the slot.
        public var firstChunkTimeout: Duration
        /// Timeout of one probe while the device reboots (an echo: did it go away? is it back?).
        public var probeTimeout: Duration
        /// Pause between probes while waiting for the device to go away after a reset.
        public var probeInterval: Duration
        /// How long a device that accepted a reset may keep answering before the upgrade decides
        /// it did not reset (Zephyr reboots 250 ms after answering; MCUboot's serial recovery too).
        public var rebootTimeout: Duration
        /// Plan an image older than the running one even when the device reports that its
        /// bootloader refuses downgrades (the bootloader will then erase it; a warning says so).
        public var allowDowngrade: Bool
        /// How long to keep reconnecting after a reset before the upgrade fails.
        public var reconnectTimeout: Duration
        /// Pause between reconnection attempts.
        public var reconnectInterval: Duration
        /// How often a step that failed on the link (timeout, disconnect) is retried after a
        /// reconnection; an upload resumes where the device stopped.
        public var retries: Int
        /// SUIT: how long to wait for the device to install the envelope (serving the resources
        /// it asks for) before failing.
        public var suitInstallTimeout: Duration
        /// SUIT: pause between polls for requested resources.
        public var suitPollInterval: Duration
        /// The device is in MCUboot's serial recovery already (its application is broken, or the
        /// recovery button was held): upload to the primary slots, reset, verify. Without it a
        /// device that answers like serial recovery (no bootloader info, nothing running) is
        /// recognised and updated the same way, with a warning.
        public var recovery: Bool
        /// Let the upgrade reset the device first when a test image runs unconfirmed and the
        /// upgrade needs its revert target's slot (or a reset it needs would revert it): MCUboot
        /// then reverts it, and the plan shows the revert as a step. Without it such an upgrade is
        /// refused before anything changes (``FirmwareUpgradeError/Code/slotBusy``). Upload-only
        /// never resets, and an image marked for the next boot is never booted on the upgrade's
        /// initiative, with or without it.
        public var revertPending: Bool

        /// Creates a configuration.
        /// - Parameters:
        ///   - mode: what happens after the upload.
        ///   - window: upload requests in flight.
        ///   - byteAlignment: chunk size multiple.
        ///   - reassemblyBufferSize: a lower frame limit.
        ///   - eraseAppSettings: erase settings storage after the upload.
        ///   - allowDowngrade: plan older images despite the device's downgrade prevention.
        ///   - estimatedSwapTime: the bootloader's swap time.
        ///   - firstChunkTimeout: timeout of each image's first chunk.
        ///   - probeTimeout: timeout of one probe while the device reboots.
        ///   - probeInterval: pause between probes.
        ///   - rebootTimeout: how long a device may answer after accepting a reset.
        ///   - reconnectTimeout: how long to reconnect after a reset.
        ///   - reconnectInterval: pause between reconnection attempts.
        ///   - retries: retries of a step after a link failure.
        ///   - suitInstallTimeout: SUIT installation deadline.
        ///   - suitPollInterval: SUIT polling period.
        ///   - recovery: the device is in serial recovery already.
        ///   - revertPending: let the upgrade revert a running test image that is in the way.
        public init(
            mode: Mode = .confirmOnly,
            window: Int? = nil,
            byteAlignment: Int = 1,
            reassemblyBufferSize: Int? = nil,
            eraseAppSettings: Bool = false,
            allowDowngrade: Bool = false,
            estimatedSwapTime: Duration = .zero,
            firstChunkTimeout: Duration = .seconds(40),
            probeTimeout: Duration = .seconds(1),
            probeInterval: Duration = .milliseconds(100),
            rebootTimeout: Duration = .seconds(5),
            reconnectTimeout: Duration = .seconds(60),
            reconnectInterval: Duration = .milliseconds(250),
            retries: Int = 3,
            suitInstallTimeout: Duration = .seconds(30),
            suitPollInterval: Duration = .milliseconds(150),
            recovery: Bool = false,
            revertPending: Bool = false
        ) {
            self.mode = mode
            self.window = window
            self.byteAlignment = byteAlignment
            self.reassemblyBufferSize = reassemblyBufferSize
            self.eraseAppSettings = eraseAppSettings
            self.estimatedSwapTime = estimatedSwapTime
            self.firstChunkTimeout = firstChunkTimeout
            self.probeTimeout = probeTimeout
            self.probeInterval = probeInterval
            self.rebootTimeout = rebootTimeout
            self.allowDowngrade = allowDowngrade
            self.reconnectTimeout = reconnectTimeout
            self.reconnectInterval = reconnectInterval
            self.retries = retries
            self.suitInstallTimeout = suitInstallTimeout
            self.suitPollInterval = suitPollInterval
            self.recovery = recovery
            self.revertPending = revertPending
        }
    }

    /// Where an upgrade is. Every event and every error names one.
    public enum State: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// Not started.
        case idle
        /// Reading the device's buffer parameters (OS 6).
        case requestingParameters = "requesting-parameters"
        /// Reading the bootloader name and mode (OS 8).
        case readingBootloaderInfo = "reading-bootloader-info"
        /// Reading the image list and planning.
        case validating
        /// Uploading images.
        case uploading
        /// Erasing the application settings (Zephyr basic 0).
        case erasingAppSettings = "erasing-app-settings"
        /// Marking images for test.
        case testing
        /// Confirming images.
        case confirming
        /// Resetting into the bootloader (`boot_mode` 1: MCUboot's serial recovery or the
        /// firmware loader) to update a single-slot device, and checking that it got there.
        case enteringBootloader = "entering-bootloader"
        /// Sending the reset.
        case resetting
        /// Watching the device go away after it accepted the reset.
        case waitingForReboot = "waiting-for-reboot"
        /// Waiting for the bootloader to swap.
        case waitingForSwap = "waiting-for-swap"
        /// Reconnecting to the device.
        case reconnecting
        /// Reading the image list to check the outcome.
        case verifying
        /// SUIT: the device installs the envelope and asks for resources.
        case installing
        /// Finished: the device is in the promised state.
        case succeeded
        /// Stopped with an error.
        case failed
        /// Cancelled by the caller.
        case cancelled

        public var description: String { rawValue }
    }
}
