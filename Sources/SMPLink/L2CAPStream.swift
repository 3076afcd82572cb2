import SMPCore

/// SMP frames over an L2CAP connection-oriented channel's byte stream: pure bookkeeping, no I/O.
///
/// An L2CAP channel (CoreBluetooth's `CBL2CAPChannel`) is a pair of byte streams with no message
/// boundaries, so frames go out back to back and come in cut by their header length
/// (`SMPStreamDecoder`). An output stream may take only part of what is offered, so outgoing
/// bytes wait here until the stream reports how many it wrote.
///
/// ```swift
/// var stream = L2CAPStream()
/// stream.enqueue(frame)
/// let written = output.write(stream.pendingBytes)   // may be less than offered
/// stream.didWrite(written)
/// for frame in stream.receive(inputBytes) { … }
/// ```
public struct L2CAPStream: Sendable {
    private var outgoing: [UInt8] = []
    private var outgoingStart = 0
    private var decoder: SMPStreamDecoder

    /// Creates an empty stream.
    /// - Parameter maximumFrameSize: the largest frame accepted from the device.
    public init(maximumFrameSize: Int = SMPHeader.size + SMPFrame.maximumPayloadSize) {
        decoder = SMPStreamDecoder(maximumFrameSize: maximumFrameSize)
    }

    /// Queues a whole frame to send.
    public mutating func enqueue(_ frame: [UInt8]) {
        outgoing.append(contentsOf: frame)
    }

    /// Bytes queued and not yet written, oldest first.
    public var pendingBytes: ArraySlice<UInt8> { outgoing[outgoingStart...] }

    /// Whether everything queued has been written.
    public var isDrained: Bool { outgoingStart == outgoing.count }

    /// Records that the output stream took `count` bytes of ``pendingBytes``.
    public mutating func didWrite(_ count: Int) {
        outgoingStart = min(outgoing.count, outgoingStart + max(0, count))
        if outgoingStart == outgoing.count {
            outgoing.removeAll(keepingCapacity: true)
            outgoingStart = 0
        } else if outgoingStart > 4096 {
            outgoing.removeFirst(outgoingStart)
            outgoingStart = 0
        }
    }

    /// Feeds bytes read from the input stream.
    /// - Returns: the frames they complete, in order.
    public mutating func receive(_ bytes: some Sequence<UInt8>) -> [[UInt8]] {
        decoder.feed(bytes).compactMap { event in
            if case .frame(let frame) = event { frame } else { nil }
        }
    }

    /// Forgets partial input and unsent output (after the channel closed).
    public mutating func reset() {
        outgoing.removeAll()
        outgoingStart = 0
        decoder.reset()
    }
}
