import Foundation
import Logging
import MCUboot
import MCUmgr
import SMPCore

extension FirmwareUpgradeDriver {
    /// Uploads one image (or SUIT part), turning the transfer's events into the upgrade's.
    mutating func upload<U: ChunkedUpload>(_ upload: U, image: Int) async throws {
        let configuration = upgrade.configuration
        let options = TransferOptions(
            window: configuration.window,
            alignment: max(1, configuration.byteAlignment),
            firstChunkTimeout: configuration.firstChunkTimeout,
            maximumFrameSize: configuration.reassemblyBufferSize
        )
        let (before, total) = uploadTotals(upTo: machine.currentStep)
        var resumedAt = 0
        var confirmed = 0
        defer { uploadedBytes += max(0, confirmed - resumedAt) }
        for try await event in try connected().upload(upload, options: options) {
            switch event {
            case .progress(let progress):
                confirmed = progress.bytesConfirmed
                let done = before + progress.bytesConfirmed
                let rate = progress.bytesPerSecond
                continuation.yield(
                    .uploadProgress(
                        .init(
                            image: image,
                            imageBytesConfirmed: progress.bytesConfirmed,
                            imageBytes: progress.totalBytes,
                            totalBytesConfirmed: done,
                            totalBytes: total,
                            bytesPerSecond: rate,
                            estimatedTimeRemaining: rate > 0 ? .seconds(Double(total - done) / rate) : nil
                        )
                    )
                )
                if control.isPaused && progress.bytesConfirmed < progress.totalBytes { throw UploadPaused() }
            case .resumed(let offset):
                resumedAt = offset
                continuation.yield(.uploadResumed(image: image, offset: offset))
            case .windowChanged(let change):
                continuation.yield(.windowChanged(image: image, change))
            case .restarted(let reason):
                continuation.yield(.warning("image \(image): the upload starts again: \(reason)"))
            }
        }
    }

    /// Uploads part of a SUIT package.
    mutating func uploadSUIT(_ part: FirmwareUpgradeStateMachine.SUITUpload) async throws {
        switch part {
        case .envelope(let index, let deferInstall):
            let image = payload.images[index]
            try await upload(SUITEnvelopeUpload(data: image.data, deferInstall: deferInstall), image: image.imageIndex)
        case .cache(let index):
            let image = payload.images[index]
            let cache = SUITCacheUpload(data: image.data, targetID: UInt32(clamping: image.imageIndex))
            try await upload(cache, image: image.imageIndex)
        case .resource(let name, let session):
            guard let data = payload.resource(name) else {
                throw FirmwareUpgradeError(.resourceNotFound, state: machine.state, "the package does not hold \(name)")
            }
            for try await _ in try connected().upload(
                SUITResourceUpload(data: data, streamSessionID: session),
                options: TransferOptions(window: upgrade.configuration.window)
            ) {}
        }
    }

    /// The digests of the manifests the SUIT device has installed.
    func installedDigests() async throws -> [[UInt8]] {
        let client = try connected()
        let roles = try await client.send(SUITManagement.ManifestList()).manifests.map(\.role)
        var digests: [[UInt8]] = []
        for role in roles {
            if let digest = try await client.send(SUITManagement.ManifestState(role: role)).digest {
                digests.append(Array(digest))
            }
        }
        return digests
    }

    /// Bytes of the plan's uploads before `step`, and of all of them.
    private func uploadTotals(upTo step: FirmwareUpgradePlan.Step?) -> (before: Int, total: Int) {
        var before = 0
        var total = 0
        var passed = false
        for candidate in machine.plan?.steps ?? [] {
            let index: Int
            switch candidate {
            case .upload(_, let packageIndex), .suitUploadEnvelope(let packageIndex, _),
                .suitUploadCache(let packageIndex):
                index = packageIndex
            default: continue
            }
            if candidate == step { passed = true }
            if !passed { before += payload.images[index].data.count }
            total += payload.images[index].data.count
        }
        return (before, total)
    }
}
