/// Host-to-controller ACL flow control (Core Vol 4 Part E 4.1.1), with the packets waiting for
/// room: the controller holds ``capacity`` ACL packets for all connections together, and frees
/// them with Number Of Completed Packets.
///
/// A pure queue in the style of a NIO state machine: ``enqueue(_:)`` and each input return the
/// packets the I/O layer may write now, in the order they were queued.
public struct ACLFlowControl: Sendable {
    /// How many packets the controller holds (Total_Num_LE_ACL_Data_Packets).
    public let capacity: Int
    /// Packets written and not yet completed, per connection handle.
    public private(set) var inFlight: [UInt16: Int] = [:]
    private var queue: [HCIACLDataPacket] = []
    private var head = 0

    /// Creates the flow control of a controller.
    /// - Parameter capacity: the controller's ACL packet count (at least 1 is used).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Packets the controller has room for now.
    public var available: Int { capacity - inFlight.values.reduce(0, +) }

    /// Packets waiting for room.
    public var queuedCount: Int { queue.count - head }

    /// Queues packets to send.
    /// - Parameter packets: the packets (for example an L2CAP PDU's fragments), in order.
    /// - Returns: those that may be written now, oldest first.
    public mutating func enqueue(_ packets: [HCIACLDataPacket]) -> [HCIACLDataPacket] {
        queue.append(contentsOf: packets)
        return drain()
    }

    /// The controller freed buffers.
    /// - Parameter event: the Number Of Completed Packets event.
    /// - Returns: packets that may be written now. A count larger than what is in flight on a
    ///   handle, or a handle with nothing in flight (a previous host's), frees only what this
    ///   host sent: a confused controller cannot grant more room than it has.
    public mutating func completed(_ event: HCI.NumberOfCompletedPackets) -> [HCIACLDataPacket] {
        for entry in event.completed {
            guard let sent = inFlight[entry.connectionHandle] else { continue }
            let left = sent - min(sent, Int(entry.count))
            inFlight[entry.connectionHandle] = left == 0 ? nil : left
        }
        return drain()
    }

    /// A connection ended: the controller drops its packets without completing them, and the
    /// host drops those still queued for it.
    /// - Parameter connectionHandle: the handle of the Disconnection Complete.
    /// - Returns: packets of other connections that may be written now.
    public mutating func disconnected(connectionHandle: UInt16) -> [HCIACLDataPacket] {
        inFlight[connectionHandle] = nil
        queue = queue[head...].filter { $0.connectionHandle != connectionHandle }
        head = 0
        return drain()
    }

    private mutating func drain() -> [HCIACLDataPacket] {
        var ready: [HCIACLDataPacket] = []
        while head < queue.count && available > 0 {
            let packet = queue[head]
            head += 1
            inFlight[packet.connectionHandle, default: 0] += 1
            ready.append(packet)
        }
        if head == queue.count {
            queue.removeAll(keepingCapacity: true)
            head = 0
        }
        return ready
    }
}
