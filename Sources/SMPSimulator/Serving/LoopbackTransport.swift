import Foundation
import SMPBytes
import SMPLink

/// An in-process transport to a ``SimulatedDevice``: no sockets, no threads of its own.
///
/// A send hands the frame to the device as a datagram arrives at Zephyr: it takes a buffer of the
/// device's pool (or is lost when none is free) and is answered later by the device's work queue,
/// so pipelined requests meet the same limits as over UDP.
public struct LoopbackTransport: SMPTransport {
    /// The device.
    public let device: SimulatedDevice

    /// Creates a transport to a device.
    /// - Parameter device: the device.
    public init(device: SimulatedDevice) {
        self.device = device
    }

    public var endpointDescription: String { "sim://loopback" }

    public func connect() async throws -> any SMPConnection {
        LoopbackConnection(device: device, maximumFrameSize: device.configuration.bufferSize)
    }
}

/// One connection of a ``LoopbackTransport``.
public final class LoopbackConnection: SMPConnection, Sendable {
    /// The device buffer size: the largest frame the device accepts.
    public let maximumFrameSize: Int
    public let frames: AsyncThrowingStream<[UInt8], any Error>

    private let device: SimulatedDevice
    private let continuation: AsyncThrowingStream<[UInt8], any Error>.Continuation
    /// Whether the connection was closed (by either side).
    private let closed = Locked(false)
    /// The answers this connection holds the device's quiet clock for; `nil` without one.
    private let held: HeldAnswers?

    init(device: SimulatedDevice, maximumFrameSize: Int) {
        self.device = device
        self.maximumFrameSize = maximumFrameSize
        let (sent, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
        self.continuation = continuation
        guard let clock = device.configuration.quietClock else {
            held = nil
            frames = sent
            return
        }
        let held = HeldAnswers(clock: clock)
        self.held = held
        frames = held.reading(sent)
    }

    deinit {
        held?.releaseAll()
    }

    public func send(_ frame: [UInt8]) async throws {
        guard !closed.withLock({ $0 }) else { throw SMPTransportError.closed("the loopback connection is closed") }
        guard frame.count <= maximumFrameSize else {
            throw SMPTransportError.frameTooLarge(
                size: frame.count,
                limit: maximumFrameSize,
                "\(frame.count)-byte frame exceeds the simulated device's \(maximumFrameSize)-byte buffer"
            )
        }
        let (continuation, closed, held) = (self.continuation, self.closed, self.held)
        let clock = device.configuration.clock
        await device.receive(frame) { delivery in
            guard !closed.withLock({ $0 }) else { return }
            for scheduled in delivery.responses {
                // Held from now until the client reads it (or the connection ends).
                held?.hold()
                let frame = scheduled.frame
                if scheduled.delay <= .zero {
                    if case .terminated = continuation.yield(frame) { held?.release() }
                } else {
                    Task {
                        try? await clock.sleep(scheduled.delay)
                        if case .terminated = continuation.yield(frame) { held?.release() }
                    }
                }
            }
            if delivery.disconnect {
                closed.withLock { $0 = true }
                continuation.finish(throwing: SMPTransportError(.disconnected, "the simulated device dropped the link"))
            }
        }
    }

    public func close() async {
        closed.withLock { $0 = true }
        continuation.finish()
        held?.releaseAll()
    }
}

/// The answers of one connection that hold a ``QuietClock``: from when the device sends one
/// until the client has read it — that is, asks for the next (an SMP client handles an answer
/// before it reads on) — or the connection ends.
private final class HeldAnswers: Sendable {
    private let clock: QuietClock
    /// Holds taken and not yet released.
    private let count = Locked(0)

    init(clock: QuietClock) {
        self.clock = clock
    }

    func hold() {
        count.withLock { $0 += 1 }
        clock.hold()
    }

    /// Releases one hold, unless ``releaseAll()`` already did.
    func release() {
        let had = count.withLock { count -> Bool in
            guard count > 0 else { return false }
            count -= 1
            return true
        }
        if had { clock.release() }
    }

    func releaseAll() {
        let holds = count.withLock { count -> Int in
            defer { count = 0 }
            return count
        }
        for _ in 0..<holds { clock.release() }
    }

    /// `sent` as its reader sees it: each answer's hold is released when the reader asks for
    /// the next one.
    func reading(_ sent: AsyncThrowingStream<[UInt8], any Error>) -> AsyncThrowingStream<[UInt8], any Error> {
        let reader = Reader(sent.makeAsyncIterator())
        return AsyncThrowingStream { [self] in
            if reader.handedOut {
                reader.handedOut = false
                release()
            }
            let frame = try await reader.iterator.next()
            reader.handedOut = frame != nil
            return frame
        }
    }

    /// The one reader's iterator. Unchecked: a connection's frames are read by one task at a
    /// time (the client's read loop), so `next()` never runs twice at once and the two fields
    /// are touched by one task at a time.
    private final class Reader: @unchecked Sendable {
        var iterator: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator
        var handedOut = false

        init(_ iterator: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator) {
            self.iterator = iterator
        }
    }
}
