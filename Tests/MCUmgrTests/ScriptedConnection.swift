import Foundation
import MCUmgr
import SMPCBOR
import SMPCore

/// A fake connection that answers each sent frame through a script: the script sees the
/// request frame and returns the frames to deliver (none = lost, two = duplicated).
final class ScriptedConnection: SMPConnection, @unchecked Sendable {
    // `lock` guards `sent` and `script`; the stream continuation is thread-safe.
    private let lock = NSLock()
    private var script: (SMPFrame) -> [[UInt8]]
    private var sentFrames: [SMPFrame] = []
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    let frames: AsyncThrowingStream<[UInt8], any Error>
    let maximumFrameSize: Int

    init(maximumFrameSize: Int = 1024, script: @escaping (SMPFrame) -> [[UInt8]]) {
        (frames, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        self.maximumFrameSize = maximumFrameSize
        self.script = script
    }

    var sent: [SMPFrame] {
        lock.lock()
        defer { lock.unlock() }
        return sentFrames
    }

    func send(_ frame: [UInt8]) async throws {
        let parsed = try SMPFrame(parsing: frame)
        for reply in record(parsed) { continuation.yield(reply) }
    }

    private func record(_ frame: SMPFrame) -> [[UInt8]] {
        lock.withLock {
            sentFrames.append(frame)
            return script(frame)
        }
    }

    /// Delivers a frame nobody asked for.
    func inject(_ frame: [UInt8]) { continuation.yield(frame) }

    /// Simulates the link dropping.
    func drop() { continuation.finish(throwing: SMPTransportError(.disconnected, "link lost")) }

    func close() async { continuation.finish() }

    /// A reply to `request` with a CBOR payload.
    static func reply(_ request: SMPFrame, _ payload: CBOR, version: SMPVersion? = nil) -> [UInt8] {
        var header = request.header
        if let version { header.version = version }
        return (try? SMPFrame.response(payload: payload, to: header).bytes) ?? []
    }
}
