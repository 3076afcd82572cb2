/// Any HCI packet, as the H4 transport carries them.
public enum HCIPacket: Sendable, Hashable {
    /// A command (host to controller).
    case command(HCICommandPacket)
    /// ACL data (both ways).
    case acl(HCIACLDataPacket)
    /// An event (controller to host).
    case event(HCIEventPacket)
    /// Synchronous (SCO) or isochronous data: framed so the stream stays in step, not parsed
    /// (an LE host that never sets them up should not receive them).
    case unparsed(indicator: H4PacketIndicator, bytes: [UInt8])

    /// The packet's H4 indicator.
    public var indicator: H4PacketIndicator {
        switch self {
        case .command: .command
        case .acl: .acl
        case .event: .event
        case .unparsed(let indicator, _): indicator
        }
    }

    /// The packet's bytes without the indicator.
    public func encoded() -> [UInt8] {
        switch self {
        case .command(let packet): packet.encoded()
        case .acl(let packet): packet.encoded()
        case .event(let packet): packet.encoded()
        case .unparsed(_, let bytes): bytes
        }
    }

    /// Parses a packet from its indicator and bytes.
    /// - Parameters:
    ///   - indicator: the H4 packet indicator.
    ///   - bytes: the packet without the indicator.
    /// - Throws: ``HCIError`` `.malformedPacket` if the lengths do not add up.
    public init(indicator: H4PacketIndicator, bytes: [UInt8]) throws(HCIError) {
        switch indicator {
        case .command: self = .command(try HCICommandPacket(bytes: bytes))
        case .acl: self = .acl(try HCIACLDataPacket(bytes: bytes))
        case .event: self = .event(try HCIEventPacket(bytes: bytes))
        default: self = .unparsed(indicator: indicator, bytes: bytes)
        }
    }
}
