import Foundation
import MCUboot
import SMPCBOR
import SMPCore

/// Group 1, image management, as Zephyr's `img_mgmt.c`/`img_mgmt_state.c` answer it, over the
/// ``MCUbootModel``.
enum ImageHandler {
    static let group = HandlerGroup(
        group: .image,
        name: "img mgmt",
        routes: [
            Route(ImageManagement.StateRead.self) { _, device, _ in stateList(device) },
            Route(ImageManagement.StateWrite.self) { request, device, _ throws(HandlerFailure) in
                try setState(request, device: &device)
            },
            Route(ImageManagement.Upload.self) { request, device, effects throws(HandlerFailure) in
                try upload(request, device: &device, effects: &effects)
            },
            Route(ImageManagement.Erase.self) { request, device, effects throws(HandlerFailure) in
                try erase(request, device: &device, effects: &effects)
            },
            Route(ImageManagement.SlotInfo.self) { _, device, _ in slotInfo(device) },
        ]
    )

    /// The state list, every flag written, then `splitStatus: 0` (Zephyr without the frugal list).
    static func stateList(_ device: DeviceCore) -> CBORMap {
        let images = device.bootloader.stateList().map(\.withEveryFlag)
        return CBORMap(response: ImageManagement.StateRead.Response(images: images, splitStatus: 0))
    }

    static func setState(_ request: SMPServerRequest, device: inout DeviceCore) throws(HandlerFailure) -> CBORMap {
        // Plain DirectXIP has no state write handler.
        guard device.configuration.bootloaderMode != .directXIP else { throw .management(.notSupported) }
        let state = try request.decode(ImageManagement.StateWrite.self)
        let result = device.bootloader.setState(
            hash: state.hash.map { Array($0) },
            confirm: state.confirm ?? false,
            allowConfirmNonActive: device.configuration.allowConfirmNonActive
        )
        if case .failure(let refusal) = result { throw .group(.image, refusal.rawValue) }
        return stateList(device)
    }

    static func upload(
        _ request: SMPServerRequest,
        device: inout DeviceCore,
        effects: inout DeviceCore.Effects
    ) throws(HandlerFailure) -> CBORMap {
        let map = try request.map()
        let chunk = ImageUploadChunk(
            offset: try map.unsigned("off"),
            data: try map.bytes("data") ?? [],
            length: try map.unsigned("len"),
            sha: try map.bytes("sha"),
            image: try map.unsigned("image"),
            upgrade: try map.bool("upgrade")
        )
        let decision = ImageUploadAlgorithm.decide(chunk, session: device.upload, model: device.bootloader)
        var written: (image: Int, slot: Int, offset: Int)
        switch decision {
        case .refuse(let code):
            throw .group(.image, code)
        case .answerOffset(let offset):
            return CBORMap(response: ImageManagement.Upload.Response(offset: UInt64(clamping: offset)))
        case .start(let session, let erase):
            if erase {
                device.bootloader.erase(image: session.image, slot: session.slot)
                effects.flashTime += flashDuration(
                    bytes: session.length,
                    rate: device.configuration.eraseBytesPerSecond
                )
            }
            device.upload = session
            written = (session.image, session.slot, 0)
        case .write(let offset):
            guard let session = device.upload else { throw .group(.image, 1) }
            written = (session.image, session.slot, offset)
        }
        if let lossOffset = device.uploadPowerLossOffset, written.offset + chunk.data.count > lossOffset {
            device.uploadPowerLossOffset = nil
            throw .powerLoss
        }
        var stored = chunk.data
        if let bad = device.flashCorruptionOffset, (written.offset..<written.offset + stored.count).contains(bad) {
            device.flashCorruptionOffset = nil
            effects.flashCorrupted = true
            let index = stored.startIndex + (bad - written.offset)
            stored[index] ^= 0x10
        }
        device.bootloader.write(image: written.image, slot: written.slot, offset: written.offset, bytes: stored)
        effects.flashTime += flashDuration(bytes: chunk.data.count, rate: device.configuration.writeBytesPerSecond)
        device.upload?.offset = written.offset + chunk.data.count
        guard let session = device.upload else { return CBORMap() }
        var match: Bool?
        if session.offset >= session.length {
            // Done: the session ends; with image check the whole upload is hashed against `sha`.
            if device.configuration.imageCheck && !session.sha.isEmpty {
                let data = device.bootloader.slots[session.image][session.slot].data.prefix(session.length)
                let digest = ImageHashAlgorithm.sha256.hash(Array(data))
                match = Array(digest.prefix(session.sha.count)) == session.sha
            }
            device.upload = nil
        }
        return CBORMap(
            response: ImageManagement.Upload.Response(offset: UInt64(clamping: session.offset), match: match)
        )
    }

    static func erase(
        _ request: SMPServerRequest,
        device: inout DeviceCore,
        effects: inout DeviceCore.Effects
    ) throws(HandlerFailure) -> CBORMap {
        let erase = try request.decode(ImageManagement.Erase.self)
        let global = Int(clamping: erase.slot ?? 1)
        let perImage = device.bootloader.slotsPerImage
        let image = global / perImage
        let slot = global % perImage
        let release = device.configuration.release
        // No such partition: 3.4 fails to open the flash area; newer releases name the slot.
        guard image < device.bootloader.imageCount else { throw .group(.image, release == .v3_4 ? 10 : 14) }
        if device.bootloader.isInUse(image: image, slot: slot) { throw .group(.image, 9) }  // NO_FREE_SLOT
        // 3.4 reports a failure when the slot is already blank (fixed in 3.6).
        if release == .v3_4 && device.bootloader.slots[image][slot] == .erased { throw .group(.image, 1) }
        device.bootloader.erase(image: image, slot: slot)
        device.upload = nil
        effects.flashTime += flashDuration(
            bytes: device.configuration.slotSize,
            rate: device.configuration.eraseBytesPerSecond
        )
        return CBORMap()
    }

    /// Slot sizes; `max_image_size` only from releases with Zephyr's "too large" checks (3.4 had
    /// none), which count MCUboot's trailer.
    static func slotInfo(_ device: DeviceCore) -> CBORMap {
        let size = UInt64(clamping: device.configuration.slotSize)
        let largest = UInt64(clamping: device.bootloader.largestBootableImage)
        let images = (0..<device.bootloader.imageCount).map { image in
            ImageManagement.SlotInfo.Image(
                image: UInt32(image),
                slots: (0..<device.bootloader.slotsPerImage).map { .init(slot: UInt32($0), size: size) },
                maxImageSize: device.configuration.release == .v3_4 ? nil : largest
            )
        }
        return CBORMap(response: ImageManagement.SlotInfo.Response(images: images))
    }

    static func flashDuration(bytes: Int, rate: Double?) -> Duration {
        guard let rate, rate > 0 else { return .zero }
        return .milliseconds(Int64(Double(bytes) / rate * 1000))
    }
}

extension HandlerFailure {
    /// A power loss while handling the request (converted by the core into silence and a reboot).
    static var powerLoss: HandlerFailure { .management(SMPReturnCode(rawValue: -1)) }
}
