import SMPBytes

/// Cuts whole SMP messages out of a byte stream by their header length.
///
/// Used for raw UART (`CONFIG_MCUMGR_TRANSPORT_RAW_UART`, MCUboot's raw protocol), for L2CAP
/// streams, and to reassemble BLE notifications: GATT keeps order, so concatenating
/// notifications and cutting at `8 + length` recovers each message however it was fragmented.
///
/// Resynchronisation: raw framing has no delimiter, so a header that cannot be real (reserved
/// bits or version set, an undefined operation, a length above ``maximumFrameSize``) makes the
/// decoder drop one byte and look again, reporting ``SMPFramingEvent/discarded(_:)``. A transport
/// calls ``reset()`` when its receive timeout expires, as the device side does.
public struct SMPStreamDecoder: SMPFrameDecoding {
    /// The largest message accepted, header included.
    public let maximumFrameSize: Int
    private var buffer: [UInt8] = []
    private var readIndex = 0
    /// Bytes skipped since the last good header; reported once the next header lines up, so
    /// the events do not depend on how the bytes were chunked.
    private var skipped = 0

    /// Creates a decoder.
    /// - Parameter maximumFrameSize: the largest message accepted (header included); at most
    ///   8 + 65535.
    public init(maximumFrameSize: Int = SMPHeader.size + SMPFrame.maximumPayloadSize) {
        self.maximumFrameSize = min(maximumFrameSize, SMPHeader.size + SMPFrame.maximumPayloadSize)
    }

    /// Bytes received but not yet part of a complete message.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Discards a partial message (after a receive timeout or a reconnect).
    public mutating func reset() {
        buffer.removeAll(keepingCapacity: true)
        readIndex = 0
        skipped = 0
    }

    /// Feeds received bytes.
    /// - Parameter bytes: the bytes, split anywhere.
    /// - Returns: the messages completed by these bytes, and any bytes discarded while resynchronising.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [SMPFramingEvent] {
        buffer.append(contentsOf: bytes)
        var events: [SMPFramingEvent] = []
        while readIndex < buffer.count {
            // Reserved bits (7–5), reserved versions (bit 4) and undefined operations (> 3) cannot
            // start a real header; decide on the first byte as soon as it is here.
            if buffer[readIndex] & 0xf4 != 0 {
                skip()
                continue
            }
            guard buffer.count - readIndex >= SMPHeader.size else { break }
            let reader = ByteReader(buffer[readIndex..<readIndex + SMPHeader.size])
            guard let length = reader.getInteger(at: 2, endianness: .big, as: UInt16.self) else { break }
            let total = SMPHeader.size + Int(length)
            if total > maximumFrameSize {
                skip()
                continue
            }
            if skipped > 0 {
                events.append(
                    .discarded(SMPError(.badFrameLength, "skipped \(skipped) bytes that cannot start an SMP header"))
                )
                skipped = 0
            }
            guard buffer.count - readIndex >= total else { break }
            events.append(.frame(Array(buffer[readIndex..<readIndex + total])))
            readIndex += total
        }
        compact()
        return events
    }

    private mutating func skip() {
        readIndex += 1
        skipped += 1
    }

    private mutating func compact() {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            readIndex = 0
        } else if readIndex > 4096 && readIndex * 2 > buffer.count {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
    }
}
