import SMPBytes

/// An L2CAP channel identifier. An open set; the named ones are LE's fixed channels.
public struct L2CAPChannelID: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt16
    /// Creates a channel identifier from its value.
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    /// 0x0004: the Attribute Protocol.
    public static let att = L2CAPChannelID(rawValue: 0x0004)
    /// 0x0005: LE signalling.
    public static let leSignalling = L2CAPChannelID(rawValue: 0x0005)
    /// 0x0006: the Security Manager.
    public static let securityManager = L2CAPChannelID(rawValue: 0x0006)

    public var description: String { "0x" + hex(rawValue, digits: 4) }
}

/// A basic L2CAP PDU (B-frame, Core Vol 3 Part A 3.1): a length, a channel, a payload.
public struct L2CAPPDU: Sendable, Hashable {
    /// The channel.
    public var channelID: L2CAPChannelID
    /// The payload (at most 65535 bytes).
    public var payload: [UInt8]

    /// Creates a PDU.
    /// - Parameters:
    ///   - channelID: the channel.
    ///   - payload: at most 65535 bytes; more is a programming error.
    public init(channelID: L2CAPChannelID, payload: [UInt8]) {
        precondition(payload.count <= Int(UInt16.max), "an L2CAP payload is at most 65535 bytes")
        self.channelID = channelID
        self.payload = payload
    }

    /// Parses a whole PDU.
    /// - Parameter bytes: length (2 bytes), channel (2 bytes), payload.
    /// - Throws: ``HCIError`` `.malformedPacket` if the header is short or the length is not the
    ///   payload's.
    public init(bytes: some Collection<UInt8>) throws(HCIError) {
        var reader = HCIParameterReader(bytes, packet: "L2CAP PDU")
        let length = Int(try reader.readUInt16("Length"))
        let channel = L2CAPChannelID(rawValue: try reader.readUInt16("Channel ID"))
        guard reader.readableBytes == length else {
            throw HCIError(
                .malformedPacket,
                "L2CAP PDU on channel \(channel): length \(length), but \(reader.readableBytes) payload bytes"
            )
        }
        self.channelID = channel
        self.payload = reader.readRest()
    }

    /// The PDU's bytes.
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + payload.count)
        writer.writeInteger(UInt16(payload.count), endianness: .little)
        writer.writeInteger(channelID.rawValue, endianness: .little)
        writer.writeBytes(payload)
        return writer.bytes
    }

    /// The ACL packets that carry the PDU to a controller: the first non-flushable, the rest
    /// continuing, each at most the controller's ACL data length.
    /// - Parameters:
    ///   - connectionHandle: the connection.
    ///   - maximumDataLength: the controller's ACL data packet length (at least 1 is used).
    /// - Returns: the fragments, in order.
    public func fragments(connectionHandle: UInt16, maximumDataLength: Int) -> [HCIACLDataPacket] {
        let bytes = encoded()
        let size = max(1, maximumDataLength)
        return stride(from: 0, to: bytes.count, by: size).map { offset in
            HCIACLDataPacket(
                connectionHandle: connectionHandle,
                packetBoundary: offset == 0 ? .firstNonFlushable : .continuing,
                data: Array(bytes[offset..<min(bytes.count, offset + size)])
            )
        }
    }
}
