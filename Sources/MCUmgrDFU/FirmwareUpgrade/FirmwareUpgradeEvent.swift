import Foundation
import MCUmgr
import SMPCore

extension FirmwareUpgrade {
    /// Something the caller may show: the stream of an upgrade yields these, then finishes
    /// after ``completed(_:)`` or throws a ``FirmwareUpgradeError``.
    public enum Event: Sendable {
        /// The state changed.
        case stateChanged(from: State, to: State)
        /// The device's image list as first read, before the upgrade changed anything (once per
        /// run): what the device ran, known as soon as it answered, so that a caller can record it
        /// even when the upgrade later fails or is cancelled.
        case imagesRead([ImageManagement.SlotState])
        /// The plan was made (again after a reset that freed a slot).
        case planned(FirmwareUpgradePlan)
        /// Upload progress of one image and of the whole upload.
        case uploadProgress(UploadProgress)
        /// The device continued an interrupted upload of an image from an offset.
        case uploadResumed(image: Int, offset: Int)
        /// The upload of an image changed how many requests it keeps in flight, and why.
        case windowChanged(image: Int, WindowChange)
        /// The upgrade is connecting to the device again (once per attempt): after the reset it
        /// sent, or after the link was lost.
        case reconnecting(Reconnecting)
        /// Worth telling a person; the upgrade goes on.
        case warning(String)
        /// The caller paused; the upgrade holds in this state.
        case paused(State)
        /// The caller resumed.
        case resumed(State)
        /// The device is in the promised state.
        case completed(Summary)
    }

    /// A reconnection attempt.
    public struct Reconnecting: Sendable, Hashable {
        /// The link was lost (a dropped connection, answers that stopped), not dropped by a reset
        /// the upgrade sent.
        public var afterLinkLoss: Bool
        /// The attempt being made, from 1.
        public var attempt: Int
        /// How much longer the upgrade keeps trying before it fails
        /// (``Configuration/reconnectTimeout`` from the first attempt).
        public var remaining: Duration

        /// Creates a description of an attempt.
        /// - Parameters:
        ///   - afterLinkLoss: the link was lost.
        ///   - attempt: the attempt, from 1.
        ///   - remaining: how much longer the upgrade keeps trying.
        public init(afterLinkLoss: Bool, attempt: Int, remaining: Duration) {
            self.afterLinkLoss = afterLinkLoss
            self.attempt = attempt
            self.remaining = remaining
        }
    }

    /// Upload progress, per image and in total.
    public struct UploadProgress: Sendable, Hashable {
        /// The image number being uploaded.
        public var image: Int
        /// Bytes of this image the device has confirmed.
        public var imageBytesConfirmed: Int
        /// Size of this image.
        public var imageBytes: Int
        /// Bytes of all the images to upload that the device has confirmed.
        public var totalBytesConfirmed: Int
        /// Size of all the images to upload.
        public var totalBytes: Int
        /// Confirmed bytes per second of the current image's transfer.
        public var bytesPerSecond: Double
        /// Time until every image is uploaded at the current rate, when known.
        public var estimatedTimeRemaining: Duration?

        /// Completed fraction of the whole upload, 0…1.
        public var fraction: Double { totalBytes == 0 ? 1 : Double(totalBytesConfirmed) / Double(totalBytes) }

        /// Creates a progress value.
        public init(
            image: Int,
            imageBytesConfirmed: Int,
            imageBytes: Int,
            totalBytesConfirmed: Int,
            totalBytes: Int,
            bytesPerSecond: Double,
            estimatedTimeRemaining: Duration?
        ) {
            self.image = image
            self.imageBytesConfirmed = imageBytesConfirmed
            self.imageBytes = imageBytes
            self.totalBytesConfirmed = totalBytesConfirmed
            self.totalBytes = totalBytes
            self.bytesPerSecond = bytesPerSecond
            self.estimatedTimeRemaining = estimatedTimeRemaining
        }
    }

    /// How an upgrade ended.
    public struct Summary: Sendable {
        /// The last plan (nil only if the upgrade never planned).
        public var plan: FirmwareUpgradePlan?
        /// The image list before anything was written.
        public var before: [ImageManagement.SlotState]
        /// The image list at the end (empty for SUIT devices).
        public var after: [ImageManagement.SlotState]
        /// The bootloader name the device reported, if it did.
        public var bootloaderName: String?
        /// The bootloader mode the device reported, if it did.
        public var bootloaderMode: OSManagement.MCUbootMode?
        /// Bytes the device confirmed during this run's uploads (resumed bytes excluded).
        public var uploadedBytes: Int
        /// Time from start to finish.
        public var duration: Duration
        /// The device already ran the package: nothing was done.
        public var isUpToDate: Bool
        /// The upgrade reset the device first so that MCUboot reverted a running test image
        /// (``Configuration/revertPending``).
        public var reverted: Bool
    }
}
