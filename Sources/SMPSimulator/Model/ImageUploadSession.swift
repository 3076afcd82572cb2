import Foundation
import MCUboot
import SMPBytes

/// Zephyr's image upload algorithm (`img_mgmt_upload_inspect` and its handler), as pure state.
///
/// One session at a time, in RAM: a reset loses it. See `smp-protocol.md` §5.3.
public struct ImageUploadSession: Sendable, Hashable {
    /// The image being uploaded.
    public var image: Int
    /// The slot it is written to.
    public var slot: Int
    /// The total length announced in the first chunk.
    public var length: Int
    /// The `sha` of the first chunk (up to 32 bytes), used to resume.
    public var sha: [UInt8]
    /// Bytes accepted so far: the offset expected next.
    public var offset: Int

    /// Creates a session.
    public init(image: Int, slot: Int, length: Int, sha: [UInt8], offset: Int = 0) {
        self.image = image
        self.slot = slot
        self.length = length
        self.sha = sha
        self.offset = offset
    }
}

/// One upload request, with the first-chunk fields optional as on the wire.
public struct ImageUploadChunk: Sendable, Hashable {
    /// `off`; `nil` when absent (refused with `INVALID_OFFSET`).
    public var offset: UInt64?
    /// `data`.
    public var data: [UInt8]
    /// `len` (first chunk).
    public var length: UInt64?
    /// `sha` (first chunk).
    public var sha: [UInt8]?
    /// `image` (first chunk).
    public var image: UInt64?
    /// `upgrade` (first chunk).
    public var upgrade: Bool?

    /// Creates a chunk.
    public init(
        offset: UInt64?,
        data: [UInt8],
        length: UInt64? = nil,
        sha: [UInt8]? = nil,
        image: UInt64? = nil,
        upgrade: Bool? = nil
    ) {
        self.offset = offset
        self.data = data
        self.length = length
        self.sha = sha
        self.image = image
        self.upgrade = upgrade
    }
}

/// What the upload algorithm decided for one chunk.
public enum ImageUploadDecision: Sendable, Hashable {
    /// Erase the slot, start a session and write the chunk at 0.
    case start(ImageUploadSession, erase: Bool)
    /// Write the chunk at the session's offset.
    case write(offset: Int)
    /// Nothing to write; answer success with this offset (resume, or a chunk at the wrong offset).
    case answerOffset(Int)
    /// Refuse with an image-group code (`img_mgmt_err_code_t`).
    case refuse(Int)
}

/// The decision procedure. Pure: the device applies the decision to flash.
public enum ImageUploadAlgorithm {
    /// Decides what to do with a chunk.
    /// - Parameters:
    ///   - chunk: the request.
    ///   - session: the session in progress, if any.
    ///   - model: the bootloader model (slot choice, slot size, running versions).
    /// - Returns: the decision.
    public static func decide(
        _ chunk: ImageUploadChunk,
        session: ImageUploadSession?,
        model: MCUbootModel
    ) -> ImageUploadDecision {
        guard let offset = chunk.offset else { return .refuse(20) }  // INVALID_OFFSET
        if offset == 0 {
            // The order the observed Zephyr 3.4 server answered in (`zephyr-observed.md`): a
            // missing `len` before a short header. Zephyr's sources read the other way round;
            // only a chunk with both faults can tell.
            guard let length = chunk.length else { return .refuse(21) }  // INVALID_LENGTH
            guard chunk.data.count >= ImageHeader.structureSize else { return .refuse(22) }  // INVALID_IMAGE_HEADER
            // Zephyr looks at the magic only; a header of zeros past it reaches the size check.
            let header = ByteReader(chunk.data.prefix(ImageHeader.structureSize))
            guard header.getInteger(at: 0, endianness: .little, as: UInt32.self) == ImageHeader.magic else {
                return .refuse(23)  // INVALID_IMAGE_HEADER_MAGIC
            }
            let sha = chunk.sha ?? []
            guard sha.count <= 32 else { return .refuse(24) }  // INVALID_HASH
            let image = Int(clamping: chunk.image ?? 0)
            // Resume: same image and the same (non-empty) sha as the session in progress.
            if let session, !sha.isEmpty, session.sha == sha, session.image == image,
                session.length == Int(clamping: length)
            {
                return .answerOffset(session.offset)
            }
            let slot: Int
            switch model.uploadSlot(image: image) {
            case .success(let chosen): slot = chosen
            case .failure(let refusal): return .refuse(refusal.rawValue)
            }
            guard length <= UInt64(model.slotSize) else { return .refuse(30) }  // INVALID_IMAGE_TOO_LARGE
            if chunk.upgrade == true {
                guard let running = model.image(image, slot: model.activeSlots[image])?.header.version else {
                    return .refuse(26)  // VERSION_GET_FAILED
                }
                // CURRENT_VERSION_IS_NEWER: the version at bytes 20-27 is not above the running one.
                let version = ImageVersion(
                    major: header.getInteger(at: 20, endianness: .little, as: UInt8.self) ?? 0,
                    minor: header.getInteger(at: 21, endianness: .little, as: UInt8.self) ?? 0,
                    revision: header.getInteger(at: 22, endianness: .little, as: UInt16.self) ?? 0
                )
                if version <= running.withoutBuild { return .refuse(27) }
            }
            if UInt64(chunk.data.count) > length { return .refuse(31) }  // INVALID_IMAGE_DATA_OVERRUN
            return .start(ImageUploadSession(image: image, slot: slot, length: Int(length), sha: sha), erase: true)
        }
        guard let session, offset == UInt64(session.offset) else {
            return .answerOffset(session?.offset ?? 0)
        }
        if offset + UInt64(chunk.data.count) > UInt64(session.length) { return .refuse(31) }
        return .write(offset: session.offset)
    }
}
