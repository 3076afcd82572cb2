import Foundation
import SMPCore
import SMPLink

/// The data size of each chunk of one upload, so that its frame fills the limit exactly
/// (``ChunkSizing``), with the encoding of an empty request done once per kind of offset rather
/// than once per chunk.
///
/// A chunk request's frame depends on its offset only through the offset's CBOR integer width,
/// and on whether it opens the session or starts at 0 (where image, file and SUIT requests add
/// the length and identifying fields): the empty frame is encoded once for each such kind. A
/// ``ChunkedUpload`` whose requests vary otherwise still cannot send an oversized frame: the
/// client refuses any frame over the limit before it is sent.
struct ChunkSizer<U: ChunkedUpload> {
    let upload: U
    let limit: Int
    let alignment: Int
    /// Per kind of offset: the frame with empty data, and the most data that fits the limit.
    private var frames: [Kind: (empty: Int, most: Int)] = [:]

    private struct Kind: Hashable {
        var isFirst: Bool
        var atZero: Bool
        var offsetWidth: Int
    }

    init(upload: U, limit: Int, alignment: Int) {
        self.upload = upload
        self.limit = limit
        self.alignment = alignment
    }

    /// The data size of the chunk at `offset`.
    /// - Parameters:
    ///   - offset: where the chunk starts.
    ///   - isFirst: whether it opens the session.
    /// - Returns: the size (> 0 unless nothing remains).
    /// - Throws: ``SMPTransportError/Code/frameTooLarge`` when not even one data byte fits the
    ///   limit; an encoding error of the request.
    mutating func size(at offset: Int, isFirst: Bool) throws -> Int {
        let kind = Kind(isFirst: isFirst, atZero: offset == 0, offsetWidth: Self.width(of: offset))
        let frame: (empty: Int, most: Int)
        if let known = frames[kind] {
            frame = known
        } else {
            let request = upload.request(offset: offset, data: Data(), isFirst: isFirst)
            let empty = try SMPFrame.request(request, sequence: 0).bytes.count
            frame = (empty, ChunkSizing.largestData(limit: limit, emptyFrame: empty))
            frames[kind] = frame
        }
        let remaining = upload.data.count - offset
        let size = ChunkSizing.fit(frame.most, alignment: alignment, remaining: remaining)
        guard size > 0 || remaining == 0 else {
            throw SMPTransportError.frameTooLarge(
                // One data byte past the empty frame, unless the alignment is what leaves no room.
                size: alignment > 1 ? nil : frame.empty + 1,
                limit: limit,
                "an upload chunk with no data already exceeds the \(limit)-byte frame limit"
            )
        }
        return size
    }

    /// The bytes of an unsigned integer's CBOR head.
    static func width(of value: Int) -> Int {
        switch value {
        case ..<24: 1
        case ..<256: 2
        case ..<65536: 3
        case ..<4_294_967_296: 5
        default: 9
        }
    }
}
