import Foundation
import SMPCBOR
import SMPCore
import SMPLink

/// One kind of chunked upload: how to build the request for a chunk and read the device's
/// next offset from the answer. Image, file-system and SUIT uploads each conform, so one
/// engine (``SMPClient/upload(_:options:control:)``) drives all of them.
public protocol ChunkedUpload: Sendable {
    /// The request type of a chunk.
    associatedtype Request: SMPRequest

    /// The bytes to upload.
    var data: Data { get }

    /// Builds the request for one chunk.
    /// - Parameters:
    ///   - offset: where the chunk starts.
    ///   - data: the chunk.
    ///   - isFirst: whether this is the session-opening chunk (offset 0 or a resume), which
    ///     carries the total length and the identifying fields.
    /// - Returns: the request.
    func request(offset: Int, data: Data, isFirst: Bool) -> Request

    /// The offset the device expects next, read from its answer.
    /// - Parameter response: the answer to a chunk.
    /// - Returns: the next offset.
    func nextOffset(from response: Request.Response) -> Int

    /// The offset the device expects, when it refused a chunk for being at the wrong place
    /// (the FS group answers FILE_OFFSET_NOT_VALID with `len`); `nil` if the error is fatal.
    /// - Parameter error: the refusal.
    func expectedOffset(after error: SMPDeviceError) -> Int?

    /// Checks the answer that completes the upload (the device's offset reached the end).
    /// - Parameter response: the final answer.
    /// - Throws: when the device reports that what it received is not what was sent.
    func checkCompletion(_ response: Request.Response) throws

    /// Whether the device already holds the whole upload. Asked when every byte was sent, the
    /// answer to the last chunk was lost, and the device answers the repeated chunk with offset 0:
    /// Zephyr ends a finished image upload session, so it cannot tell a finished upload from a
    /// lost one. `false` uploads again from the start.
    /// - Parameter client: the client, to ask the device.
    func isComplete(on client: SMPClient) async -> Bool
}

extension ChunkedUpload {
    /// By default every refusal is fatal.
    public func expectedOffset(after error: SMPDeviceError) -> Int? { nil }

    /// By default the final answer carries no verdict.
    public func checkCompletion(_ response: Request.Response) throws {}

    /// By default nothing can tell: upload again.
    public func isComplete(on client: SMPClient) async -> Bool { false }
}

/// An MCUboot image upload (image group, command 1).
public struct ImageUpload: ChunkedUpload {
    /// The image bytes.
    public let data: Data
    /// The image number (0 = application core; 1 = e.g. network core).
    public let image: Int
    /// Ask the device to refuse images not newer than the running one.
    public let upgrade: Bool
    /// SHA-256 of the whole file: identifies the session so an interrupted upload resumes.
    public let sha256: Data
    /// The image's hash as the device lists it (MCUboot's hash TLV), when the caller knows it: a
    /// finished upload whose last answer was lost is then recognised in the image list instead
    /// of being sent again.
    public let imageHash: [UInt8]?

    /// Creates an image upload. The client does no hashing (it carries no cryptography):
    /// `MCUmgrDFU` adds `init(data:image:upgrade:imageHash:)`, which computes the SHA-256.
    /// - Parameters:
    ///   - data: the image file's bytes.
    ///   - image: the target image number.
    ///   - upgrade: refuse unless newer than the running image.
    ///   - sha256: SHA-256 of `data`.
    ///   - imageHash: the image's hash TLV, as the device will list it.
    public init(data: Data, image: Int = 0, upgrade: Bool = false, sha256: Data, imageHash: [UInt8]? = nil) {
        self.data = data
        self.image = image
        self.upgrade = upgrade
        self.sha256 = sha256
        self.imageHash = imageHash
    }

    /// The image list shows the image (by its hash TLV) in a slot of its image number.
    public func isComplete(on client: SMPClient) async -> Bool {
        guard let imageHash, let list = try? await client.send(ImageManagement.StateRead()) else { return false }
        return list.images.contains { Int($0.imageNumber) == image && $0.hash.map(Array.init) == imageHash }
    }

    /// Builds the image upload request for one chunk; the session-opening chunk also carries the
    /// total length, the file's SHA-256 (so the device can resume), the image number and `upgrade`.
    /// - Parameters:
    ///   - offset: where the chunk starts.
    ///   - chunk: the chunk's bytes.
    ///   - isFirst: whether this chunk opens the session.
    /// - Returns: the request.
    public func request(offset: Int, data chunk: Data, isFirst: Bool) -> ImageManagement.Upload {
        guard isFirst else { return ImageManagement.Upload(offset: UInt64(offset), data: chunk) }
        return ImageManagement.Upload(
            offset: UInt64(offset),
            data: chunk,
            length: UInt64(data.count),
            sha256: sha256,
            image: image == 0 ? nil : UInt32(image),
            upgrade: upgrade ? true : nil
        )
    }

    public func nextOffset(from response: ImageManagement.Upload.Response) -> Int { Int(clamping: response.offset) }

    /// With `CONFIG_IMG_ENABLE_IMAGE_CHECK` the device hashes the whole upload and answers
    /// `match`; `false` means the slot does not hold the file, whatever the offsets said.
    /// - Throws: ``SMPTransferError`` `.deviceHashMismatch` when `match` is `false`.
    public func checkCompletion(_ response: ImageManagement.Upload.Response) throws {
        guard response.match == false else { return }
        throw SMPTransferError(
            .deviceHashMismatch,
            "the device hashed the \(data.count)-byte upload and it does not match the SHA-256 sent with it: "
                + "the data was corrupted on the way or in flash; upload again"
        )
    }
}

/// A file upload to the device's file system (FS group, command 0).
public struct FileUpload: ChunkedUpload {
    /// The file's contents.
    public let data: Data
    /// The path on the device, e.g. `/lfs1/config.txt`.
    public let name: String

    /// Creates a file upload.
    /// - Parameters:
    ///   - data: the contents.
    ///   - name: the device path.
    public init(data: Data, name: String) {
        self.data = data
        self.name = name
    }

    /// Builds the file upload request for one chunk; the chunk at offset 0 also carries the length.
    /// - Parameters:
    ///   - offset: where the chunk starts.
    ///   - chunk: the chunk's bytes.
    ///   - isFirst: whether this chunk opens the session.
    /// - Returns: the request.
    public func request(offset: Int, data chunk: Data, isFirst: Bool) -> FileManagement.Upload {
        FileManagement.Upload(
            offset: UInt64(offset),
            data: chunk,
            name: name,
            length: offset == 0 ? UInt64(data.count) : nil
        )
    }

    public func nextOffset(from response: FileManagement.Upload.Response) -> Int { Int(clamping: response.offset) }

    /// FILE_OFFSET_NOT_VALID carries `len`, the file's current length: continue from there.
    public func expectedOffset(after error: SMPDeviceError) -> Int? {
        guard error.matches(FileManagement.ReturnCode.fileOffsetNotValid),
            let length = error.payload?["len"]?.uint64Value
        else {
            return nil
        }
        return Int(clamping: length)
    }
}
