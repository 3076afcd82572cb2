/// The packet indicator that precedes every packet on an H4 (UART) transport (Core Vol 4 Part A
/// 2). An open set; the decoder accepts only the five the specification defines.
public struct H4PacketIndicator: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt8
    /// Creates an indicator from its value.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// 0x01: HCI command.
    public static let command = H4PacketIndicator(rawValue: 0x01)
    /// 0x02: ACL data.
    public static let acl = H4PacketIndicator(rawValue: 0x02)
    /// 0x03: synchronous (SCO) data.
    public static let synchronous = H4PacketIndicator(rawValue: 0x03)
    /// 0x04: HCI event.
    public static let event = H4PacketIndicator(rawValue: 0x04)
    /// 0x05: isochronous data.
    public static let isochronous = H4PacketIndicator(rawValue: 0x05)

    public var description: String { "0x" + hex(rawValue, digits: 2) }

    /// The header after the indicator: its size, and where its length field sits and how wide
    /// it is (a mask for ISO's 14-bit length).
    var header: (size: Int, lengthOffset: Int, lengthSize: Int, lengthMask: Int)? {
        switch rawValue {
        case 0x01: (3, 2, 1, 0xFF)
        case 0x02: (4, 2, 2, 0xFFFF)
        case 0x03: (3, 2, 1, 0xFF)
        case 0x04: (2, 1, 1, 0xFF)
        case 0x05: (4, 2, 2, 0x3FFF)
        default: nil
        }
    }
}

/// Writes packets for an H4 transport: the indicator, then the packet.
public enum H4Encoder {
    /// The H4 bytes of a packet.
    /// - Parameter packet: the packet.
    /// - Returns: its indicator followed by its bytes.
    public static func encode(_ packet: HCIPacket) -> [UInt8] {
        [packet.indicator.rawValue] + packet.encoded()
    }
}

/// Cuts the byte stream of an H4 transport into packets, as bytes arrive in any pieces.
///
/// Pure bookkeeping in the style of SwiftNIO's single-step decoders: ``append(_:)`` what was
/// read, then call ``next()`` until it returns `nil`. A byte where an indicator should be that
/// is not one is an error, and so is an ACL packet longer than ``maximumACLDataLength``: the
/// stream cannot be trusted after either, and the decoder stays failed (the transport should be
/// reset). Memory is bounded by the largest packet allowed plus what one read appends.
public struct H4Decoder: Sendable {
    private var buffer: [UInt8] = []
    private var start = 0
    private var failure: HCIError?

    /// The largest ACL data length accepted. The H4 header allows 65535; a host knows the
    /// largest L2CAP PDU it accepts and may say less.
    public let maximumACLDataLength: Int

    /// Creates a decoder.
    /// - Parameter maximumACLDataLength: the largest ACL data length accepted (at most 65535).
    public init(maximumACLDataLength: Int = Int(UInt16.max)) {
        self.maximumACLDataLength = min(max(0, maximumACLDataLength), Int(UInt16.max))
    }

    /// Bytes received and not yet part of a whole packet.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds bytes read from the transport.
    /// - Parameter bytes: the bytes, in any pieces.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        buffer.append(contentsOf: bytes)
    }

    /// The next whole packet, or `nil` until enough bytes have arrived.
    /// - Returns: the packet, or `nil`.
    /// - Throws: ``HCIError`` `.unknownPacketIndicator` for a byte that is not a packet
    ///   indicator, `.limitExceeded` for an ACL packet longer than ``maximumACLDataLength``,
    ///   `.malformedPacket` never (the lengths come from the header); once thrown, every later
    ///   call throws the same error.
    public mutating func next() throws(HCIError) -> HCIPacket? {
        if let failure { throw failure }
        guard start < buffer.count else { return nil }
        let indicator = H4PacketIndicator(rawValue: buffer[start])
        guard let header = indicator.header else {
            return try fail(
                HCIError(
                    .unknownPacketIndicator,
                    "byte \(indicator) where an H4 packet indicator (0x01 to 0x05) was expected; "
                        + "the stream is out of step"
                )
            )
        }
        let headerStart = start + 1
        guard buffer.count - headerStart >= header.size else { return nil }
        var length = Int(buffer[headerStart + header.lengthOffset])
        if header.lengthSize == 2 { length |= Int(buffer[headerStart + header.lengthOffset + 1]) << 8 }
        length &= header.lengthMask
        if indicator == .acl && length > maximumACLDataLength {
            return try fail(
                HCIError(
                    .limitExceeded,
                    "an ACL packet of \(length) data bytes, more than the \(maximumACLDataLength) accepted"
                )
            )
        }
        let end = headerStart + header.size + length
        guard buffer.count >= end else { return nil }
        let bytes = Array(buffer[headerStart..<end])
        start = end
        compact()
        return try HCIPacket(indicator: indicator, bytes: bytes)
    }

    private mutating func fail(_ error: HCIError) throws(HCIError) -> HCIPacket? {
        failure = error
        buffer = []
        start = 0
        throw error
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            start = 0
        } else if start > 4096 {
            buffer.removeFirst(start)
            start = 0
        }
    }
}
