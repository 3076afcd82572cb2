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

    /// One command (or group of commands) of the sequence.
    public enum Step: Sendable, Hashable, CustomStringConvertible {
        /// Reset to free a slot held by another image marked for boot, then read the list and
        /// plan again.
        case resetBeforeUpload
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
            case .resetBeforeUpload: "reset (free the slot)"
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

    /// The images that are acted on (not skipped).
    public var activeImages: [ImagePlan] { images.filter { $0.action != .skip } }
}
