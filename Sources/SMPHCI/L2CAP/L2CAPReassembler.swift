/// Joins the ACL packets of one connection into L2CAP PDUs, by the length in each PDU's header.
///
/// A first fragment starts a PDU (an unfinished one before it is dropped, as the specification
/// has the receiver do); continuing fragments add to it. A PDU may also arrive whole in one
/// ACL packet longer than the controller's buffer size, as Bumble's controller sends them. One
/// reassembler per connection handle.
public struct L2CAPReassembler: Sendable {
    private var partial: [UInt8]?

    /// The largest PDU payload accepted.
    public let maximumPayloadLength: Int

    /// Creates a reassembler.
    /// - Parameter maximumPayloadLength: the largest payload accepted (the ATT MTU this host
    ///   offers, for instance); at most 65535.
    public init(maximumPayloadLength: Int = Int(UInt16.max)) {
        self.maximumPayloadLength = min(max(0, maximumPayloadLength), Int(UInt16.max))
    }

    /// Whether a PDU is partly received.
    public var isReassembling: Bool { partial != nil }

    /// Adds an ACL packet's data.
    /// - Parameter packet: the packet.
    /// - Returns: the PDU it completes, or `nil` while more is needed.
    /// - Throws: ``HCIError`` `.malformedPacket` for a continuing fragment without a start, or
    ///   data beyond the PDU's length; `.limitExceeded` for a PDU longer than
    ///   ``maximumPayloadLength``. The partial PDU is dropped; the next first fragment starts
    ///   afresh.
    public mutating func receive(_ packet: HCIACLDataPacket) throws(HCIError) -> L2CAPPDU? {
        var bytes: [UInt8]
        if packet.packetBoundary.isFirst {
            bytes = packet.data
        } else {
            guard let partial else {
                throw HCIError(
                    .malformedPacket,
                    "a continuing ACL fragment on handle 0x\(hex(packet.connectionHandle, digits: 3)) with no PDU begun"
                )
            }
            bytes = partial + packet.data
        }
        partial = nil
        // The header itself may be split.
        guard bytes.count >= 4 else {
            partial = bytes
            return nil
        }
        let length = Int(bytes[0]) | Int(bytes[1]) << 8
        guard length <= maximumPayloadLength else {
            throw HCIError(
                .limitExceeded,
                "an L2CAP PDU of \(length) bytes, more than the \(maximumPayloadLength) accepted"
            )
        }
        if bytes.count < 4 + length {
            partial = bytes
            return nil
        }
        guard bytes.count == 4 + length else {
            throw HCIError(
                .malformedPacket,
                "ACL data runs \(bytes.count - 4 - length) bytes past an L2CAP PDU of \(length) bytes"
            )
        }
        return try L2CAPPDU(bytes: bytes)
    }
}
