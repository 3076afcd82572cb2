import Foundation
import SMPBytes
import SMPCore
import SMPLink

/// A transport that lets a test act at exact moments of what the engine does: before each
/// connection opens and before each frame goes out, the engine waiting meanwhile. Events reach
/// a test's consumer behind the engine (they are buffered), so acting on them races the engine
/// on a loaded machine; acting here does not.
public struct HookedTransport: SMPTransport {
    /// What the engine is about to do.
    public enum Moment: Sendable {
        /// Open its `index`-th connection (from 0).
        case connect(index: Int)
        /// Send a frame.
        case send(SMPFrame)
    }

    public let inner: any SMPTransport
    public let hook: @Sendable (Moment) async -> Void
    private let connections = Counter()

    /// Wraps a transport.
    /// - Parameters:
    ///   - inner: the transport that does the work.
    ///   - hook: called before each connection opens and each frame goes out; the engine waits.
    public init(_ inner: any SMPTransport, hook: @escaping @Sendable (Moment) async -> Void) {
        self.inner = inner
        self.hook = hook
    }

    public var endpointDescription: String { inner.endpointDescription }

    public func connect() async throws -> any SMPConnection {
        await hook(.connect(index: connections.next()))
        return Connection(inner: try await inner.connect(), hook: hook)
    }

    private struct Connection: SMPConnection {
        let inner: any SMPConnection
        let hook: @Sendable (Moment) async -> Void
        var maximumFrameSize: Int { inner.maximumFrameSize }
        var frames: AsyncThrowingStream<[UInt8], any Error> { inner.frames }
        var deviceBufferOverhead: Int { inner.deviceBufferOverhead }
        var frameSizeFollowsDevice: Bool { inner.frameSizeFollowsDevice }
        var frameSizeIsChosen: Bool { inner.frameSizeIsChosen }

        func send(_ frame: [UInt8]) async throws {
            if let parsed = try? SMPFrame(parsing: frame) { await hook(.send(parsed)) }
            try await inner.send(frame)
        }

        func close() async { await inner.close() }
    }

    /// Numbers from 0, across tasks.
    private final class Counter: Sendable {
        private let value = Locked(0)
        func next() -> Int {
            value.withLock { value in
                defer { value += 1 }
                return value
            }
        }
    }
}
