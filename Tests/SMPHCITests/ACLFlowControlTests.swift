import SMPHCI
import Testing

struct ACLFlowControlTests {
    static func packets(_ count: Int, handle: UInt16 = 0x0040) -> [HCIACLDataPacket] {
        (0..<count).map {
            HCIACLDataPacket(
                connectionHandle: handle,
                packetBoundary: .continuing,
                data: [UInt8(truncatingIfNeeded: $0)]
            )
        }
    }

    @Test func sendsNoMoreThanTheControllerHoldsUntilPacketsComplete() {
        var flow = ACLFlowControl(capacity: 2)
        let queued = Self.packets(5)
        #expect(flow.enqueue(queued) == Array(queued[0..<2]))
        #expect(flow.available == 0)
        #expect(flow.queuedCount == 3)
        let freed = flow.completed(.init(completed: [.init(connectionHandle: 0x0040, count: 1)]))
        #expect(freed == [queued[2]])
        #expect(flow.completed(.init(completed: [.init(connectionHandle: 0x0040, count: 2)])) == Array(queued[3..<5]))
        #expect(flow.completed(.init(completed: [.init(connectionHandle: 0x0040, count: 2)])) == [])
        #expect(flow.available == 2)
        #expect(flow.inFlight.isEmpty)
    }

    @Test func bumblesCompletionEventFreesPerHandle() throws {
        var flow = ACLFlowControl(capacity: 4)
        _ = flow.enqueue(Self.packets(3, handle: 0x0040) + Self.packets(1, handle: 0x0041))
        guard case .numberOfCompletedPackets(let event) = try h4Event(BumbleVectors.numberOfCompletedPackets) else {
            Issue.record("not Number Of Completed Packets")
            return
        }
        _ = flow.completed(event)
        #expect(flow.available == 4)
    }

    @Test func aControllerCannotGrantMoreRoomThanItHas() {
        var flow = ACLFlowControl(capacity: 2)
        _ = flow.enqueue(Self.packets(1))
        // Too many for 0x0040, and a handle this host never used.
        _ = flow.completed(
            .init(completed: [.init(connectionHandle: 0x0040, count: 9), .init(connectionHandle: 7, count: 5)])
        )
        #expect(flow.available == 2)
        #expect(flow.enqueue(Self.packets(3)).count == 2)
    }

    @Test func aDisconnectionFreesItsPacketsAndDropsItsQueue() {
        var flow = ACLFlowControl(capacity: 2)
        let first = Self.packets(3, handle: 0x0040)
        let second = Self.packets(1, handle: 0x0041)
        #expect(flow.enqueue(first + second) == Array(first[0..<2]))
        #expect(flow.disconnected(connectionHandle: 0x0040) == second)
        #expect(flow.queuedCount == 0)
        #expect(flow.inFlight == [0x0041: 1])
    }
}
