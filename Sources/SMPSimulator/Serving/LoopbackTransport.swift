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

    init(device: SimulatedDevice, maximumFrameSize: Int) {
        self.device = device
        self.maximumFrameSize = maximumFrameSize
        (frames, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self, throwing: (any Error).self)
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
        let continuation = self.continuation
        let closed = self.closed
        let clock = device.configuration.clock
        await device.receive(frame) { delivery in
            guard !closed.withLock({ $0 }) else { return }
            for scheduled in delivery.responses {
                if scheduled.delay <= .zero {
                    continuation.yield(scheduled.frame)
                } else {
                    Task {
                        try? await clock.sleep(scheduled.delay)
                        continuation.yield(scheduled.frame)
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
    }
}
