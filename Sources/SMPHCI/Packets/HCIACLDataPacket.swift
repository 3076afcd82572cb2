import SMPBytes

/// An HCI ACL data packet (Core Vol 4 Part E 5.4.2): a connection handle, the packet boundary
/// and broadcast flags, and up to 65535 bytes of data (a whole L2CAP PDU or a fragment of one).
public struct HCIACLDataPacket: Sendable, Hashable {
    /// Packet_Boundary_Flag: where the data sits in its L2CAP PDU. All four values exist.
    public enum PacketBoundary: UInt8, Sendable, Hashable {
        /// 0b00: the first fragment, non-flushable (host to controller in LE).
        case firstNonFlushable = 0
        /// 0b01: a continuing fragment.
        case continuing = 1
        /// 0b10: the first fragment, flushable (controller to host in LE).
        case firstFlushable = 2
        /// 0b11: a complete flushable PDU (BR/EDR only; deprecated).
        case completeFlushable = 3

        /// Whether the data begins an L2CAP PDU.
        public var isFirst: Bool { self != .continuing }
    }

    /// Connection_Handle (12 bits).
    public var connectionHandle: UInt16
    /// Packet_Boundary_Flag.
    public var packetBoundary: PacketBoundary
    /// Broadcast_Flag (2 bits; 0 point-to-point, the only value in LE).
    public var broadcastFlag: UInt8
    /// The data.
    public var data: [UInt8]

    /// Creates a packet.
    /// - Parameters:
    ///   - connectionHandle: the handle; only its low 12 bits are sent.
    ///   - packetBoundary: where the data sits in its L2CAP PDU.
    ///   - broadcastFlag: 0 in LE; only its low 2 bits are sent.
    ///   - data: at most 65535 bytes; more is a programming error.
    public init(
        connectionHandle: UInt16,
        packetBoundary: PacketBoundary,
        broadcastFlag: UInt8 = 0,
        data: [UInt8]
    ) {
        precondition(data.count <= Int(UInt16.max), "HCI ACL data is at most 65535 bytes")
        self.connectionHandle = connectionHandle & 0x0FFF
        self.packetBoundary = packetBoundary
        self.broadcastFlag = broadcastFlag & 0x03
        self.data = data
    }

    /// Parses an ACL data packet (without its H4 indicator).
    /// - Parameter bytes: handle and flags (2 bytes), data length (2 bytes), data.
    /// - Throws: ``HCIError`` `.malformedPacket` if the header is short or the length does not
    ///   match the bytes.
    public init(bytes: some Collection<UInt8>) throws(HCIError) {
        var reader = HCIParameterReader(bytes, packet: "HCI ACL data packet")
        let handleAndFlags = try reader.readUInt16("Handle")
        let length = Int(try reader.readUInt16("Data_Total_Length"))
        guard reader.readableBytes == length else {
            throw HCIError(
                .malformedPacket,
                "HCI ACL data packet for handle 0x\(hex(handleAndFlags & 0x0FFF, digits: 3)): "
                    + "length \(length), but \(reader.readableBytes) data bytes"
            )
        }
        connectionHandle = handleAndFlags & 0x0FFF
        // Two bits: every value is a case, so the fallback cannot happen.
        packetBoundary = PacketBoundary(rawValue: UInt8((handleAndFlags >> 12) & 0x03)) ?? .continuing
        broadcastFlag = UInt8(handleAndFlags >> 14)
        data = reader.readRest()
    }

    /// The packet's bytes (without an H4 indicator).
    public func encoded() -> [UInt8] {
        var writer = ByteWriter(capacity: 4 + data.count)
        let handleAndFlags =
            connectionHandle & 0x0FFF | UInt16(packetBoundary.rawValue) << 12 | UInt16(broadcastFlag & 0x03) << 14
        writer.writeInteger(handleAndFlags, endianness: .little)
        writer.writeInteger(UInt16(data.count), endianness: .little)
        writer.writeBytes(data)
        return writer.bytes
    }
}
