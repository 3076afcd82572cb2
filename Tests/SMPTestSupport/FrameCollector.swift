import Foundation

/// Collects the frames of a connection in the background, so a test can wait for the next one
/// with a deadline.
public final class FrameCollector: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var frames: [[UInt8]] = []
    private var finished = false
    private var task: Task<Void, Never>?

    /// Starts collecting.
    /// - Parameter stream: a connection's frames.
    public init(_ stream: AsyncThrowingStream<[UInt8], any Error>) {
        task = Task { [weak self] in
            do {
                for try await frame in stream { self?.append(frame) }
            } catch {}
            self?.finish()
        }
    }

    deinit { task?.cancel() }

    private func append(_ frame: [UInt8]) {
        lock.lock()
        frames.append(frame)
        lock.unlock()
    }

    private func finish() {
        lock.lock()
        finished = true
        lock.unlock()
    }

    /// Whether the stream has ended.
    public var isFinished: Bool {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }

    private func take() -> [UInt8]? {
        lock.lock()
        defer { lock.unlock() }
        return frames.isEmpty ? nil : frames.removeFirst()
    }

    /// Frames received and not yet taken, without waiting.
    public var pendingCount: Int {
        lock.lock()
        defer { lock.unlock() }
        return frames.count
    }

    /// The next frame, waiting up to `timeout` (polled: the frames come from a real socket).
    public func next(timeout: Duration) async -> [UInt8]? {
        (try? await RealIO.poll(timeout: timeout, every: .milliseconds(1)) { take() }) ?? nil
    }
}
