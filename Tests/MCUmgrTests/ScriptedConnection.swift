import Foundation
import MCUmgr
import SMPCBOR
import SMPCore

/// A fake connection that answers each sent frame through a script: the script sees the
/// request frame and returns the frames to deliver (none = lost, two = duplicated).
final class ScriptedConnection: SMPConnection, @unchecked Sendable {
    /// How the fake device answers MCUmgr parameters (OS command 6), which the client reads once
    /// before its first transfer.
    enum Parameters: Sendable {
        /// The script answers it like any other request.
        case scripted
        /// Answered `{"buf_size": size, "buf_count": count}` before the script sees it.
        case buffers(size: Int, count: Int)
        /// Refused with `rc: 8` (ENOTSUP), as MCUboot and older Zephyr builds do.
        case notSupported
    }

    // `lock` guards `sent`, `script` and `waiters`; the stream continuation is thread-safe.
    private let lock = NSLock()
    private var script: (SMPFrame) -> [[UInt8]]
    private var sentFrames: [SMPFrame] = []
    private var waiters: [(condition: ([SMPFrame]) -> Bool, continuation: CheckedContinuation<Void, Never>)] = []
    private let parameters: Parameters
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    let frames: AsyncThrowingStream<[UInt8], any Error>
    let maximumFrameSize: Int
    let frameSizeIsChosen: Bool

    init(
        maximumFrameSize: Int = 1024,
        frameSizeIsChosen: Bool = false,
        parameters: Parameters = .scripted,
        script: @escaping (SMPFrame) -> [[UInt8]]
    ) {
        (frames, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        self.maximumFrameSize = maximumFrameSize
        self.frameSizeIsChosen = frameSizeIsChosen
        self.parameters = parameters
        self.script = script
    }

    var sent: [SMPFrame] {
        lock.lock()
        defer { lock.unlock() }
        return sentFrames
    }

    func send(_ frame: [UInt8]) async throws {
        let parsed = try SMPFrame(parsing: frame)
        let replies = record(parsed)
        for waiter in satisfiedWaiters() { waiter.resume() }
        for reply in replies { continuation.yield(reply) }
    }

    /// Waits until the frames sent so far meet `condition`: how a test knows a request is in
    /// flight without sleeping. Give the test a time limit: a condition never met waits forever.
    /// - Parameter condition: checked on every frame sent, under the connection's lock.
    func waitUntilSent(_ condition: @escaping ([SMPFrame]) -> Bool) async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            let met = lock.withLock {
                if condition(sentFrames) { return true }
                waiters.append((condition, waiter))
                return false
            }
            if met { waiter.resume() }
        }
    }

    private func satisfiedWaiters() -> [CheckedContinuation<Void, Never>] {
        lock.withLock {
            let frames = sentFrames
            let ready = waiters.filter { $0.condition(frames) }.map(\.continuation)
            waiters.removeAll { $0.condition(frames) }
            return ready
        }
    }

    private func record(_ frame: SMPFrame) -> [[UInt8]] {
        lock.withLock {
            sentFrames.append(frame)
            if frame.header.group == .os && frame.header.command == 6 {
                switch parameters {
                case .scripted: break
                case .buffers(let size, let count):
                    return [Self.reply(frame, ["buf_size": CBOR(size), "buf_count": CBOR(count)])]
                case .notSupported:
                    return [Self.reply(frame, ["rc": 8])]
                }
            }
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
