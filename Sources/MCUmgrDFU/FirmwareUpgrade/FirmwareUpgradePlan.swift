import Foundation
import MCUmgr
import SMPCore

/// What an upgrade will do, decided before anything is written: one entry per image with its
/// action and the reason, and the exact command sequence. Built by the engine's planner
/// from the device's slot list; rebuilt from a fresh list after a reset that cleared a slot.
public struct FirmwareUpgradePlan: Sendable, Hashable {
    /// The decision for one image number.
    public struct ImagePlan: Sendable, Hashable {
        /// What happens to the image.
        public enum Action: String, Sendable, Hashable, CustomStringConvertible {
            /// Nothing: the device already runs it in the state the mode promises.
            case skip
            /// Upload it, then test or confirm as the mode says.
            case upload
            /// It is already in the slot: no upload; test or confirm as the mode says.
            case alreadyUploaded = "already-uploaded"
            /// It is already marked for the next boot (pending); only the reset is left.
            case alreadyMarked = "already-marked"
            /// It runs but is not confirmed (an earlier test): confirm it, no reset.
            case confirmRunning = "confirm-running"

            public var description: String { rawValue }
        }

        /// The image number.
        public var imageIndex: Int
        /// Position of the chosen image in the images given to the planner.
        public var packageIndex: Int
        /// The image's TLV hash (what the device reports).
        public var hash: [UInt8]
        /// The image's version, if known.
        public var version: String?
        /// The slot the image is in or goes to (the inactive slot with DirectXIP).
        public var slot: Int
        /// The decision.
        public var action: Action
        /// Why, in words (shown with `-v` and in the CLI's plan).
        public var reason: String

        /// Creates an image plan.
        public init(
            imageIndex: Int,
            packageIndex: Int,
            hash: [UInt8],
            version: String?,
            slot: Int,
            action: Action,
            reason: String
        ) {
            self.imageIndex = imageIndex
            self.packageIndex = packageIndex
            self.hash = hash
            self.version = version
            self.slot = slot
            self.action = action
            self.reason = reason
        }
    }

    /// What the image list must show for every planned image (those not skipped).
    public enum Expectation: String, Sendable, Hashable, CustomStringConvertible {
        /// The hash is in some slot.
        case present
        /// The hash runs (`active`).
        case active
        /// The hash runs and is confirmed.
        case activeConfirmed = "active-confirmed"
        /// The hash is listed while the device is in its bootloader: MCUboot's serial recovery
        /// lists only images whose hash (and signature) it checked.
        case listed

        public var description: String { rawValue }
    }

    /// Something the bootloader does at the next reset that nobody asked the upgrade for, in the
    /// way of the upload: the image MCUboot reverts to, or an image marked for the next boot, in
    /// the slot the upgrade needs (or a reset the upgrade needs would revert a running test image).
    ///
    /// An upgrade never resets a device into one of these silently: upload-only refuses, the other
    /// modes refuse unless ``FirmwareUpgrade/Configuration/revertPending`` lets them revert a test
    /// image (a ``Step/revert(_:)`` in the plan), and an image marked for the next boot is never
    /// booted on the upgrade's initiative. ``FirmwareUpgradeError/pendingBootChanges`` carries them.
    public struct PendingBootChange: Sendable, Hashable, CustomStringConvertible {
        /// What the next reset would do.
        public enum Kind: String, Sendable, Hashable, CustomStringConvertible {
            /// The running image is an unconfirmed test: the reset brings back the image in
            /// ``PendingBootChange/slot`` (the revert target).
            case revert
            /// The slot holds an image marked for test: the reset boots it once.
            case test
            /// The slot holds an image confirmed for the next boot: the reset installs it for good.
            case permanent

            public var description: String { rawValue }
        }

        /// What the next reset would do.
        public var kind: Kind
        /// The image number.
        public var imageIndex: Int
        /// The slot holding the image the reset would boot.
        public var slot: Int
        /// That image's version, as the device lists it.
        public var version: String
        /// That image's hash, if the device lists one.
        public var hash: [UInt8]?
        /// The version running now (for ``Kind/revert``: the unconfirmed test image).
        public var runningVersion: String?
        /// The hash of the image running now, if the device lists one.
        public var runningHash: [UInt8]?

        /// Creates a description of a pending boot change.
        /// - Parameters:
        ///   - kind: what the next reset would do.
        ///   - imageIndex: the image number.
        ///   - slot: the slot of the image the reset would boot.
        ///   - version: that image's version.
        ///   - hash: that image's hash.
        ///   - runningVersion: the version running now.
        ///   - runningHash: the hash of the image running now.
        public init(
            kind: Kind,
            imageIndex: Int,
            slot: Int,
            version: String,
            hash: [UInt8]?,
            runningVersion: String?,
            runningHash: [UInt8]?
        ) {
            self.kind = kind
            self.imageIndex = imageIndex
            self.slot = slot
            self.version = version
            self.hash = hash
            self.runningVersion = runningVersion
            self.runningHash = runningHash
        }

        public var description: String {
            switch kind {
            case .revert:
                "image \(imageIndex): \(runningVersion ?? "the running image") runs unconfirmed (a test) and slot \(slot) holds \(version), which the next reset brings back (a revert)"
            case .test:
                "image \(imageIndex): slot \(slot) holds \(version) marked for test, which the next reset boots once"
            case .permanent:
                "image \(imageIndex): slot \(slot) holds \(version) confirmed for the next boot, which the next reset installs for good"
            }
        }

        /// What the reset does, as a plan step says it.
        var effect: String {
            switch kind {
            case .revert: "MCUboot reverts image \(imageIndex) from \(runningVersion ?? "the test image") to \(version)"
            case .test: "MCUboot boots \(version) once (image \(imageIndex))"
            case .permanent: "MCUboot installs \(version) for good (image \(imageIndex))"
            }
        }
    }

    /// One command (or group of commands) of the sequence.
    public enum Step: Sendable, Hashable, CustomStringConvertible {
        /// Reset so that MCUboot reverts running test images (only with
        /// ``FirmwareUpgrade/Configuration/revertPending``), then read the list and plan again.
        case revert([PendingBootChange])
        /// Reset with `boot_mode` 1 into the bootloader (serial recovery, or the firmware loader)
        /// and check that the application no longer runs: how a single-slot device is updated.
        case enterBootloader
        /// Upload one image (image group command 1; resumes an interrupted upload by `sha`).
        case upload(imageIndex: Int, packageIndex: Int)
        /// Erase the application settings (Zephyr basic group, command 0); refusals are warnings.
        case eraseAppSettings
        /// Mark an image for test (image state write, `confirm: false`); the answer must show it
        /// pending.
        case test(hash: [UInt8])
        /// Confirm an image (image state write, `confirm: true`); the answer must show it
        /// permanent, or running and confirmed.
        case confirm(hash: [UInt8])
        /// Reset (OS 5), wait the swap time, reconnect.
        case reset
        /// Read the image list and check every planned image.
        case verify(Expectation)
        /// SUIT: upload the envelope (SUIT 2), deferring installation when caches follow.
        case suitUploadEnvelope(packageIndex: Int, deferInstall: Bool)
        /// SUIT: upload a cache image (SUIT 5).
        case suitUploadCache(packageIndex: Int)
        /// SUIT: start processing the deferred envelope (SUIT 2 with `off` 0, `len` 0).
        case suitProcess
        /// SUIT: poll for resource requests (SUIT 3), serve them (SUIT 4), until the installed
        /// manifest (SUIT 0/1) has the envelope's digest.
        case suitInstall(digest: [UInt8])

        public var description: String {
            switch self {
            case .revert(let changes):
                "reset to revert (\(changes.map(\.effect).joined(separator: "; "))), then plan again"
            case .enterBootloader: "reset into the bootloader"
            case .upload(let image, _): "upload image \(image)"
            case .eraseAppSettings: "erase app settings"
            case .test(let hash): "test \(hex(hash))"
            case .confirm(let hash): "confirm \(hex(hash))"
            case .reset: "reset"
            case .verify(let expectation): "verify \(expectation)"
            case .suitUploadEnvelope(_, let deferInstall):
                deferInstall ? "upload envelope (deferred)" : "upload envelope"
            case .suitUploadCache(let index): "upload cache \(index)"
            case .suitProcess: "process envelope"
            case .suitInstall: "install (serve resources)"
            }
        }

        private func hex(_ hash: [UInt8]) -> String {
            hash.prefix(4).map { String(format: "%02x", $0) }.joined() + "…"
        }
    }

    /// The mode in force (DirectXIP without revert forces upload-only).
    public var mode: FirmwareUpgrade.Mode
    /// The bootloader mode the device reported, if it did.
    public var bootloaderMode: OSManagement.MCUbootMode?
    /// One entry per image number in the package.
    public var images: [ImagePlan]
    /// The commands, in order.
    public var steps: [Step]
    /// Things worth telling a person (a forced mode, an assumed bootloader).
    public var warnings: [String]
    /// The images are written by the bootloader side (serial recovery or the firmware loader)
    /// into their only slot, not by the application.
    public var throughBootloader: Bool

    /// Creates a plan.
    public init(
        mode: FirmwareUpgrade.Mode,
        bootloaderMode: OSManagement.MCUbootMode?,
        images: [ImagePlan],
        steps: [Step],
        warnings: [String] = [],
        throughBootloader: Bool = false
    ) {
        self.mode = mode
        self.bootloaderMode = bootloaderMode
        self.images = images
        self.steps = steps
        self.warnings = warnings
        self.throughBootloader = throughBootloader
    }

    /// Nothing to do: the device already runs the package as the mode promises.
    public var isUpToDate: Bool { steps.isEmpty }

    /// Whether the plan resets the device (to install, to enter its bootloader or to revert).
    public var resets: Bool {
        steps.contains { step in
            switch step {
            case .reset, .revert, .enterBootloader: true
            default: false
            }
        }
    }

    /// The images that are acted on (not skipped).
    public var activeImages: [ImagePlan] { images.filter { $0.action != .skip } }
}
