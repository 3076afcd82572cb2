import Foundation
import SMPCBOR
import SMPCore

/// Computes how many data bytes a chunk request can carry so that its frame exactly fills a
/// size limit — by encoding the request, not by guessing an overhead.
///
/// The request is encoded with empty data; a byte string of `n` bytes then adds `n` plus the
/// growth of its length head (1, 2, 3 or 5 bytes for `n` < 24, < 256, < 65536, more). Integers
/// are always shortest-form, so the arithmetic is exact.
public enum ChunkSizing {
    /// The largest `n` such that the frame of `makeRequest(Data(count: n))` is at most `limit`.
    /// - Parameters:
    ///   - limit: the largest frame (header included).
    ///   - alignment: round the data down to a multiple of this (1 = no alignment).
    ///   - remaining: data left to send; the result never exceeds it.
    ///   - makeRequest: builds the request around a data field.
    /// - Returns: the data size, at least 1 if any data fits, or 0 if even one byte does not fit.
    /// - Throws: an encoding error from the request.
    public static func dataSize<R: SMPRequest>(
        limit: Int,
        alignment: Int = 1,
        remaining: Int,
        makeRequest: (Data) -> R
    ) throws -> Int {
        let empty = try SMPFrame.request(makeRequest(Data()), sequence: 0).bytes.count
        return fit(largestData(limit: limit, emptyFrame: empty), alignment: alignment, remaining: remaining)
    }

    /// The most data bytes a frame of at most `limit` bytes can carry, given the size of the same
    /// frame with empty data.
    /// - Parameters:
    ///   - limit: the largest frame (header included).
    ///   - emptyFrame: the frame's size with an empty data field.
    /// - Returns: the data size, or 0 if not even one byte fits.
    static func largestData(limit: Int, emptyFrame empty: Int) -> Int {
        // `empty` already counts a one-byte head for the empty byte string.
        var best = 0
        for head in [1, 2, 3, 5] {
            let candidate = limit - empty - (head - 1)
            guard candidate > 0, headSize(candidate) <= head else { continue }
            best = max(best, candidate)
        }
        return best
    }

    /// A chunk of at most `largest` bytes, within `remaining`, rounded down to the alignment
    /// unless it is the last.
    static func fit(_ largest: Int, alignment: Int, remaining: Int) -> Int {
        var size = min(largest, remaining)
        if size < remaining && alignment > 1 {
            size -= size % alignment
        }
        return max(0, size)
    }

    /// The size of a CBOR byte-string head for a string of `count` bytes.
    static func headSize(_ count: Int) -> Int {
        switch count {
        case ..<24: 1
        case ..<256: 2
        case ..<65536: 3
        default: 5
        }
    }
}
