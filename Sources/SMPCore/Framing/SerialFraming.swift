import Foundation
import SMPBytes

/// SMP over a console UART ("SMP over console", `CONFIG_MCUMGR_TRANSPORT_UART` and MCUboot
/// serial recovery): each message becomes a packet
/// `u16 length (message + 2) ‖ message ‖ u16 CRC-16/XMODEM(message)`, all big-endian, which is
/// base64-encoded and cut into lines. The first line starts with `06 09`, the others with
/// `04 14`, and each ends with `\n`.
public enum SerialFraming {
    /// Start-of-packet marker.
    public static let startMarker: [UInt8] = [0x06, 0x09]
    /// Continuation marker.
    public static let continuationMarker: [UInt8] = [0x04, 0x14]
    /// The longest line devices accept: 127 bytes including the marker and the newline
    /// (Zephyr's current limit; older headers said 128, so 127 is safe for both).
    public static let defaultMaximumLineLength = 127

    /// Bytes added to a message by the packet around it (length prefix and CRC).
    public static let packetOverhead = 4

    /// Encodes one SMP message as console lines.
    ///
    /// The base64 text is cut into runs of whole 4-character groups so every line decodes on its
    /// own, as Zephyr and MCUboot decode each line as it arrives.
    /// - Parameters:
    ///   - message: the SMP message (header and payload).
    ///   - maximumLineLength: the longest line including marker and newline; at least 7.
    /// - Returns: the bytes to write: every line, each ending with `\n`.
    /// - Throws: ``SMPError`` `.frameTooLarge` if the message does not fit the 16-bit length.
    public static func encode(_ message: [UInt8], maximumLineLength: Int = defaultMaximumLineLength) throws(SMPError)
        -> [UInt8]
    {
        guard message.count + 2 <= Int(UInt16.max) else {
            throw SMPError.frameTooLarge(
                size: message.count,
                limit: Int(UInt16.max) - 2,
                "a console packet holds at most \(Int(UInt16.max) - 2) message bytes"
            )
        }
        var packet = ByteWriter(capacity: message.count + packetOverhead)
        packet.writeInteger(UInt16(message.count + 2), endianness: .big)
        packet.writeBytes(message)
        packet.writeInteger(CRC16XMODEM.checksum(message), endianness: .big)
        let text = Array(Data(packet.bytes).base64EncodedString().utf8)
        let perLine = max(4, (maximumLineLength - 3) / 4 * 4)
        var out: [UInt8] = []
        out.reserveCapacity(text.count + (text.count / perLine + 1) * 3)
        var start = 0
        while start < text.count {
            out += start == 0 ? startMarker : continuationMarker
            out += text[start..<min(start + perLine, text.count)]
            out.append(0x0a)
            start += perLine
        }
        return out
    }

    /// The largest SMP message whose console packet fits a device buffer of `bufferSize`
    /// decoded bytes (`MCUMGR_TRANSPORT_NETBUF_SIZE`, MCUboot's `BOOT_SERIAL_MAX_RECEIVE_SIZE`).
    /// - Parameter bufferSize: the device's reassembly buffer.
    /// - Returns: `bufferSize − 4`.
    public static func maximumMessageSize(bufferSize: Int) -> Int { max(0, bufferSize - packetOverhead) }
}

/// Receives SMP-over-console packets from a serial byte stream that may also carry console
/// and log text.
///
/// Bytes may arrive split anywhere. Text lines (and text in front of a marker on the same
/// line) come out as ``SMPFramingEvent/console(_:)``. As on the device, a start line discards
/// any partial packet, a continuation without a start is dropped, and a packet with a bad CRC,
/// bad base64 or an impossible length is dropped — reported as
/// ``SMPFramingEvent/discarded(_:)`` so the client can log why it will time out.
public struct SerialFrameDecoder: SMPFrameDecoding {
    /// The largest decoded packet accepted (length prefix, message and CRC).
    public let maximumPacketSize: Int
    /// The longest line, its newline included (as ``SerialFraming/encode(_:maximumLineLength:)``
    /// counts it): a run of this many bytes without a newline is already too long, so it is cut
    /// there and reported as console text, and memory stays bounded.
    public let maximumLineLength: Int

    private var line: [UInt8] = []
    private var packet: [UInt8]?
    /// Set after a packet was dropped mid-way: its remaining continuation lines are dropped
    /// silently instead of each being reported as a continuation without a start.
    private var skippingPacket = false

    /// Creates a decoder.
    /// - Parameters:
    ///   - maximumPacketSize: the largest decoded packet accepted; by default the largest any
    ///     length prefix can describe.
    ///   - maximumLineLength: the longest line, newline included; a run reaching it without a
    ///     newline is flushed as console text.
    public init(maximumPacketSize: Int = 2 + Int(UInt16.max), maximumLineLength: Int = 4096) {
        self.maximumPacketSize = maximumPacketSize
        self.maximumLineLength = maximumLineLength
    }

    /// Whether part of a packet has been received.
    public var isReceivingPacket: Bool { packet != nil }

    /// Discards a partial line and packet.
    public mutating func reset() {
        line.removeAll(keepingCapacity: true)
        packet = nil
        skippingPacket = false
    }

    /// Feeds received bytes.
    /// - Parameter bytes: the bytes, split anywhere.
    /// - Returns: what the bytes completed: messages, console lines and dropped packets, in order.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [SMPFramingEvent] {
        var events: [SMPFramingEvent] = []
        for byte in bytes {
            if byte == 0x0a {
                handleLine(&events)
                line.removeAll(keepingCapacity: true)
            } else {
                line.append(byte)
                // `maximumLineLength` bytes and no newline yet: with its newline the line would
                // be longer than the limit.
                if line.count >= maximumLineLength {
                    events.append(.console(line))
                    line.removeAll(keepingCapacity: true)
                }
            }
        }
        return events
    }

    private mutating func handleLine(_ events: inout [SMPFramingEvent]) {
        var content = line[...]
        if content.last == 0x0d { content = content.dropLast() }
        // A marker may follow console text printed without a newline; split there.
        guard let markerIndex = firstMarker(in: content) else {
            events.append(.console(Array(content)))
            return
        }
        if markerIndex > content.startIndex { events.append(.console(Array(content[..<markerIndex]))) }
        let isStart = content[markerIndex] == 0x06
        let text = content[(markerIndex + 2)...]
        if isStart {
            packet = []
            skippingPacket = false
        } else if packet == nil {
            if !skippingPacket {
                events.append(
                    .discarded(SMPError(.continuationWithoutStart, "continuation line with no packet started"))
                )
            }
            return
        }
        guard let decoded = Data(base64Encoded: Data(text)) else {
            drop(SMPError(.badBase64, "line is not valid base64"), &events)
            return
        }
        packet?.append(contentsOf: decoded)
        completePacket(&events)
    }

    private func firstMarker(in bytes: ArraySlice<UInt8>) -> Int? {
        var index = bytes.startIndex
        while index + 1 < bytes.endIndex {
            let pair = (bytes[index], bytes[index + 1])
            if pair == (0x06, 0x09) || pair == (0x04, 0x14) { return index }
            index += 1
        }
        return nil
    }

    private mutating func drop(_ error: SMPError, _ events: inout [SMPFramingEvent]) {
        packet = nil
        skippingPacket = true
        events.append(.discarded(error))
    }

    private mutating func completePacket(_ events: inout [SMPFramingEvent]) {
        guard let current = packet, current.count >= 2 else { return }
        let reader = ByteReader(current)
        guard let length = reader.getInteger(at: 0, endianness: .big, as: UInt16.self) else { return }
        let total = 2 + Int(length)
        if length < 2 + UInt16(SMPHeader.size) || total > maximumPacketSize {
            drop(SMPError(.badFrameLength, "packet length \(length) is impossible here"), &events)
            return
        }
        guard current.count >= total else { return }
        packet = nil
        if current.count > total {
            events.append(
                .discarded(SMPError(.badFrameLength, "packet has \(current.count - total) bytes beyond its length"))
            )
            return
        }
        let body = current[2..<total]
        guard CRC16XMODEM.checksum(body) == 0 else {
            events.append(.discarded(SMPError(.badCRC, "CRC-16/XMODEM does not check")))
            return
        }
        events.append(.frame(Array(body.dropLast(2))))
    }
}
