/// An event from the controller, parsed: the events this host acts on, and every other event
/// kept as its packet.
public enum HCIEvent: Sendable, Hashable {
    /// Command Complete.
    case commandComplete(HCI.CommandComplete)
    /// Command Status.
    case commandStatus(HCI.CommandStatus)
    /// Disconnection Complete.
    case disconnectionComplete(HCI.DisconnectionComplete)
    /// Number Of Completed Packets.
    case numberOfCompletedPackets(HCI.NumberOfCompletedPackets)
    /// LE Connection Complete.
    case leConnectionComplete(HCI.LEConnectionComplete)
    /// LE Enhanced Connection Complete [v1].
    case leEnhancedConnectionComplete(HCI.LEEnhancedConnectionComplete)
    /// LE Connection Update Complete.
    case leConnectionUpdateComplete(HCI.LEConnectionUpdateComplete)
    /// LE Advertising Report.
    case leAdvertisingReport(HCI.LEAdvertisingReport)
    /// LE Extended Advertising Report.
    case leExtendedAdvertisingReport(HCI.LEExtendedAdvertisingReport)
    /// LE Data Length Change.
    case leDataLengthChange(HCI.LEDataLengthChange)
    /// An event (or LE subevent) this host does not parse; an LE Meta event without a subevent
    /// code is malformed, not this.
    case other(HCIEventPacket)

    /// Parses an event packet.
    /// - Parameter packet: the packet.
    /// - Throws: ``HCIError`` `.malformedPacket` if an event this host parses is too short for
    ///   its fields or its counts.
    public init(_ packet: HCIEventPacket) throws(HCIError) {
        let parameters = packet.parameters[...]
        switch packet.code {
        case .commandComplete: self = .commandComplete(try HCI.CommandComplete(parameters: parameters))
        case .commandStatus: self = .commandStatus(try HCI.CommandStatus(parameters: parameters))
        case .disconnectionComplete:
            self = .disconnectionComplete(try HCI.DisconnectionComplete(parameters: parameters))
        case .numberOfCompletedPackets:
            self = .numberOfCompletedPackets(try HCI.NumberOfCompletedPackets(parameters: parameters))
        case .leMeta:
            guard let subevent = parameters.first else {
                throw HCIError(.malformedPacket, "an LE Meta event without a subevent code")
            }
            let fields = parameters.dropFirst()
            switch subevent {
            case HCI.LEConnectionComplete.subeventCode:
                self = .leConnectionComplete(try HCI.LEConnectionComplete(parameters: fields))
            case HCI.LEEnhancedConnectionComplete.subeventCode:
                self = .leEnhancedConnectionComplete(try HCI.LEEnhancedConnectionComplete(parameters: fields))
            case HCI.LEConnectionUpdateComplete.subeventCode:
                self = .leConnectionUpdateComplete(try HCI.LEConnectionUpdateComplete(parameters: fields))
            case HCI.LEAdvertisingReport.subeventCode:
                self = .leAdvertisingReport(try HCI.LEAdvertisingReport(parameters: fields))
            case HCI.LEExtendedAdvertisingReport.subeventCode:
                self = .leExtendedAdvertisingReport(try HCI.LEExtendedAdvertisingReport(parameters: fields))
            case HCI.LEDataLengthChange.subeventCode:
                self = .leDataLengthChange(try HCI.LEDataLengthChange(parameters: fields))
            default: self = .other(packet)
            }
        default: self = .other(packet)
        }
    }

    /// The event's packet.
    public var packet: HCIEventPacket {
        switch self {
        case .commandComplete(let event): event.packet
        case .commandStatus(let event): event.packet
        case .disconnectionComplete(let event): event.packet
        case .numberOfCompletedPackets(let event): event.packet
        case .leConnectionComplete(let event): event.packet
        case .leEnhancedConnectionComplete(let event): event.packet
        case .leConnectionUpdateComplete(let event): event.packet
        case .leAdvertisingReport(let event): event.packet
        case .leExtendedAdvertisingReport(let event): event.packet
        case .leDataLengthChange(let event): event.packet
        case .other(let packet): packet
        }
    }
}
