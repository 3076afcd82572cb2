import Foundation
import MCUboot
import SMPCBOR
import SMPCore

/// MCUboot's serial recovery as an SMP server (`boot/boot_serial/src/boot_serial.c`): the
/// bootloader's own small subset of SMP, answered as MCUboot answers it.
///
/// - Frames shorter than a header, with an operation other than read or write, or whose header
///   announces fewer payload bytes than arrived are dropped without an answer; a longer message
///   than its receive buffer never decodes and is dropped too.
/// - Answers copy the request header with the operation plus one and flags cleared (the version
///   bits too: current MCUboot accepts SMP v2 headers), and carry SMP v1 codes only: `{"rc": n}`,
///   never `err`. Maps are zcbor's indefinite ones.
/// - Image list, upload, console echo control and reset always; echo, MCUmgr parameters and the
///   Zephyr-basic storage erase when built with them; everything else `rc 8`.
enum SerialRecoveryServer {
    /// The upload in progress (`bs_upload`'s `curr_off`, `img_size` and flash area, in RAM).
    struct Upload: Sendable, Hashable {
        var image: Int
        var slot: Int
        var length: Int
        var offset: Int
    }

    /// Handles one received message while serial recovery runs.
    static func process(_ bytes: [UInt8], device: inout DeviceCore) -> DeviceCore.ProcessResult {
        var result = DeviceCore.ProcessResult()
        guard let options = device.configuration.serialRecovery, bytes.count <= options.maximumMessageSize,
            let header = try? SMPHeader(parsing: bytes), header.operation == .read || header.operation == .write,
            let operation = header.operation.response, Int(header.length) >= bytes.count - SMPHeader.size
        else { return result }
        device.requestCount += 1
        device.handledCommands[SMPCommandID(header), default: 0] += 1
        let payload = Array(bytes.dropFirst(SMPHeader.size))
        guard
            let map = answer(header, payload: payload, options: options, device: &device, effects: &result.effects)
        else { return result }
        result.responses = [device.respond(to: header, operation: operation, map: map)]
        return result
    }

    private static func answer(
        _ header: SMPHeader,
        payload: [UInt8],
        options: SerialRecoveryConfiguration,
        device: inout DeviceCore,
        effects: inout DeviceCore.Effects
    ) -> CBORMap? {
        switch (header.group, header.command) {
        case (.image, 0):
            // State write needs MCUboot's image-state option, which single-slot builds cannot have.
            return header.operation == .write ? code(8) : list(device.bootloader)
        case (.image, 1):
            do throws(HandlerFailure) {
                return try upload(payload, options: options, device: &device, effects: &effects)
            } catch {
                if error == .powerLoss {
                    effects.powerLoss = true
                    return nil
                }
                return code(3)
            }
        case (.os, 0):
            guard options.echo else { return code(8) }
            guard let text = decode(payload)?.map["d"]?.stringValue else { return code(3) }
            var map = CBORMap()
            // MCUboot's own echo answer; not Zephyr's response type.
            map.put("r", text)
            return map
        case (.os, 1):
            return code(0)
        case (.os, 5):
            // The payload is not read: no `force`, no `boot_mode`.
            effects.reset = true
            return code(0)
        case (.os, 6):
            guard options.mcumgrParameters else { return code(8) }
            return CBORMap(
                response: OSManagement.MCUmgrParameters.Response(
                    bufferSize: UInt32(options.receiveBufferSize),
                    bufferCount: 1
                )
            )
        case (.zephyrBasic, 0) where options.storageErase && header.operation == .write:
            device.settings.saved = [:]
            device.settings.reload()
            return code(0)
        default:
            return code(8)
        }
    }

    /// `{"images": [...]}` with MCUboot's key order: `image` (several images only), `slot`,
    /// `hash`, `version` — no flags (single-slot builds have no image-state option), no `active`,
    /// no `splitStatus`.
    private static func list(_ model: MCUbootModel) -> CBORMap {
        var images: [CBOR] = []
        for listing in model.recoveryListing() {
            var entry = CBORMap()
            if model.imageCount > 1 { entry.put("image", listing.image) }
            entry.put("slot", listing.slot)
            if let hash = listing.hash { entry.put("hash", bytes: hash) }
            entry.put("version", listing.version)
            images.append(.map(entry))
        }
        var map = CBORMap()
        map.put("images", .array(images))
        return map
    }

    /// `bs_upload`: `image`, `data`, `len`, `off` only (`sha` and `upgrade` are not read), `off`
    /// and `data` in every chunk, `len` with the first; the first chunk erases the whole slot;
    /// a chunk at another offset is answered with the expected one; writes are cut to the flash
    /// alignment except the last, which is padded. No header, hash or signature check here:
    /// MCUboot validates at the next boot.
    private static func upload(
        _ payload: [UInt8],
        options: SerialRecoveryConfiguration,
        device: inout DeviceCore,
        effects: inout DeviceCore.Effects
    ) throws(HandlerFailure) -> CBORMap {
        guard let map = decode(payload) else { throw .management(.invalidValue) }
        let offset = try map.unsigned("off")
        let data = try map.bytes("data")
        let length = try map.unsigned("len")
        let image = try map.unsigned("image")
        guard let offset, let data else { throw .management(.invalidValue) }
        if offset == 0 {
            guard let length, length <= UInt64(device.bootloader.slotSize) else { throw .management(.invalidValue) }
            let requested = Int(clamping: image ?? 0)
            switch device.bootloader.recoveryUploadTarget(image: requested, directUpload: options.directImageUpload) {
            case .failure(let refusal):
                return code(refusal.rawValue)
            case .success(let target):
                device.bootloader.erase(image: target.image, slot: target.slot)
                effects.flashTime += ImageHandler.flashDuration(
                    bytes: device.bootloader.slotSize,
                    rate: device.configuration.eraseBytesPerSecond
                )
                device.recoveryUpload = Upload(image: target.image, slot: target.slot, length: Int(length), offset: 0)
            }
        }
        guard var upload = device.recoveryUpload, offset == UInt64(upload.offset) else {
            return answer(offset: device.recoveryUpload?.offset ?? 0)
        }
        guard upload.offset + data.count <= upload.length else { return code(3) }
        let isLast = upload.offset + data.count >= upload.length
        let alignment = options.flashAlignment
        var stored = isLast ? data : Array(data.prefix(data.count - data.count % alignment))
        if isLast && stored.count % alignment != 0 {
            stored += Array(repeating: 0xff, count: alignment - stored.count % alignment)
        }
        if let lossOffset = device.uploadPowerLossOffset, upload.offset + stored.count > lossOffset {
            device.uploadPowerLossOffset = nil
            throw .powerLoss
        }
        if let bad = device.flashCorruptionOffset, (upload.offset..<upload.offset + stored.count).contains(bad) {
            device.flashCorruptionOffset = nil
            effects.flashCorrupted = true
            stored[bad - upload.offset] ^= 0x10
        }
        device.bootloader.write(image: upload.image, slot: upload.slot, offset: upload.offset, bytes: stored)
        effects.flashTime += ImageHandler.flashDuration(
            bytes: stored.count,
            rate: device.configuration.writeBytesPerSecond
        )
        upload.offset = isLast ? upload.length : upload.offset + stored.count
        device.recoveryUpload = upload
        return answer(offset: upload.offset)
    }

    /// The payload as a map of text keys; `nil` for anything else (zcbor's bulk decoder fails).
    private static func decode(_ payload: [UInt8]) -> BulkMap? {
        guard let value = try? CBORReader.decode(payload), let map = value.mapValue,
            map.entries.allSatisfy({ $0.key.stringValue != nil })
        else { return nil }
        return BulkMap(map: map)
    }

    /// `{"rc": 0, "off": N}`: MCUboot always writes `rc` first in upload answers.
    private static func answer(offset: Int) -> CBORMap {
        var map = code(0)
        map.put("off", offset)
        return map
    }

    private static func code(_ rc: Int) -> CBORMap {
        var map = CBORMap()
        map.put("rc", rc)
        return map
    }
}
