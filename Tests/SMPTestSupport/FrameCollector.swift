import Foundation
import SMPBytes

/// Collects the frames of a connection in the background, so a test can wait for the next one
/// with a deadline.
public final class FrameCollector: Sendable {
    private struct State {
        var frames: [[UInt8]] = []
        var finished = false
        var task: Task<Void, Never>?
    }

    private let state = Locked(State())

    /// Starts collecting.
    /// - Parameter stream: a connection's frames.
    public init(_ stream: AsyncThrowingStream<[UInt8], any Error>) {
        let task = Task { [weak self] in
            do {
                for try await frame in stream { self?.state.withLock { $0.frames.append(frame) } }
            } catch {}
            self?.state.withLock { $0.finished = true }
        }
        state.withLock { $0.task = task }
    }

    deinit { state.withLock { $0.task }?.cancel() }

    /// Whether the stream has ended.
    public var isFinished: Bool { state.withLock { $0.finished } }

    private func take() -> [UInt8]? {
        state.withLock { $0.frames.isEmpty ? nil : $0.frames.removeFirst() }
    }

    /// Frames received and not yet taken, without waiting.
    public var pendingCount: Int { state.withLock { $0.frames.count } }

    /// The next frame, waiting up to `timeout` (polled: the frames come from a real socket).
    public func next(timeout: Duration) async -> [UInt8]? {
        (try? await RealIO.poll(timeout: timeout, every: .milliseconds(1)) { take() }) ?? nil
    }
}
