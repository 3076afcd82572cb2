import Foundation
import SMPCBOR
import SMPCore

/// A SUIT upload kind: the answers carry `off`, and the SUIT group's handlers answer a chunk at
/// an unexpected offset with v1 `rc` 1 (EUNKNOWN) together with the `off` they expect, so the
/// upload continues from there.
public protocol SUITChunkedUpload: ChunkedUpload where Request.Response == SUITManagement.UploadResponse {}

extension SUITChunkedUpload {
    public func nextOffset(from response: SUITManagement.UploadResponse) -> Int { Int(clamping: response.offset) }

    public func expectedOffset(after error: SMPDeviceError) -> Int? {
        guard error.requestGroup == .suit, error.returnCode == .unknown,
            let offset = error.payload?["off"]?.uint64Value
        else {
            return nil
        }
        return Int(clamping: offset)
    }
}

/// A SUIT envelope upload (SUIT group, command 2).
///
/// The device processes the envelope once its last byte arrives, unless ``deferInstall`` is
/// set; then it waits for `SUITManagement.EnvelopeUpload.processDeferredEnvelope` (sent after
/// the cache images were uploaded with ``SUITCacheUpload``).
public struct SUITEnvelopeUpload: SUITChunkedUpload {
    /// The envelope's bytes.
    public let data: Data
    /// Do not process the envelope after its last chunk (`defer_install`).
    public let deferInstall: Bool

    /// Creates an envelope upload.
    /// - Parameters:
    ///   - data: the envelope.
    ///   - deferInstall: wait for a processing request instead of installing at once.
    public init(data: Data, deferInstall: Bool = false) {
        self.data = data
        self.deferInstall = deferInstall
    }

    /// Builds the envelope upload request for one chunk; the chunk at offset 0 also carries the
    /// length and `defer_install`.
    /// - Parameters:
    ///   - offset: where the chunk starts.
    ///   - chunk: the chunk's bytes.
    ///   - isFirst: whether this chunk opens the session.
    /// - Returns: the request.
    public func request(offset: Int, data chunk: Data, isFirst: Bool) -> SUITManagement.EnvelopeUpload {
        guard offset == 0 else { return SUITManagement.EnvelopeUpload(offset: UInt64(offset), data: chunk) }
        return SUITManagement.EnvelopeUpload(
            offset: 0,
            data: chunk,
            length: UInt64(data.count),
            deferInstall: deferInstall ? true : nil
        )
    }

}

/// An image the device asked for while processing an envelope (SUIT group, command 4), streamed
/// in the session the missing-image state (command 3) named.
public struct SUITResourceUpload: SUITChunkedUpload {
    /// The resource's bytes.
    public let data: Data
    /// The `stream_session_id` from `SUITManagement.MissingImageState`.
    public let streamSessionID: UInt32

    /// Creates a resource upload.
    /// - Parameters:
    ///   - data: the requested resource.
    ///   - streamSessionID: the session the device named when it asked for it.
    public init(data: Data, streamSessionID: UInt32) {
        self.data = data
        self.streamSessionID = streamSessionID
    }

    /// Builds the resource upload request for one chunk, in the device's stream session; the chunk at
    /// offset 0 also carries the length.
    /// - Parameters:
    ///   - offset: where the chunk starts.
    ///   - chunk: the chunk's bytes.
    ///   - isFirst: whether this chunk opens the session.
    /// - Returns: the request.
    public func request(offset: Int, data chunk: Data, isFirst: Bool) -> SUITManagement.MissingImageUpload {
        SUITManagement.MissingImageUpload(
            streamSessionID: streamSessionID,
            offset: UInt64(offset),
            data: chunk,
            length: offset == 0 ? UInt64(data.count) : nil
        )
    }

}

/// A SUIT cache image (or raw image) written to a cache pool or partition (SUIT group,
/// command 5). `target_id` goes with every chunk, as Nordic's clients send it.
public struct SUITCacheUpload: SUITChunkedUpload {
    /// The cache image's bytes.
    public let data: Data
    /// The cache pool or image id (`target_id`); for packages, the image's `imageIndex`.
    public let targetID: UInt32

    /// Creates a cache upload.
    /// - Parameters:
    ///   - data: the cache image.
    ///   - targetID: the cache pool or partition id.
    public init(data: Data, targetID: UInt32) {
        self.data = data
        self.targetID = targetID
    }

    /// Builds the cache upload request for one chunk, with `target_id`; the chunk at offset 0 also
    /// carries the length.
    /// - Parameters:
    ///   - offset: where the chunk starts.
    ///   - chunk: the chunk's bytes.
    ///   - isFirst: whether this chunk opens the session.
    /// - Returns: the request.
    public func request(offset: Int, data chunk: Data, isFirst: Bool) -> SUITManagement.CacheRawUpload {
        SUITManagement.CacheRawUpload(
            targetID: targetID,
            offset: UInt64(offset),
            data: chunk,
            length: offset == 0 ? UInt64(data.count) : nil
        )
    }

}
