// Fuzz target `ble-reassembly`: SMP over GATT reassembles notifications by the header's length
// (SMPStreamDecoder, as GATTConnection and L2CAPStream use it) and fragments writes by the ATT
// MTU (BLEFragmentation).
//
// Input: byte 0 picks the ATT MTU (23...517), bytes 1–2 seed the notification sizes; the rest is
// the notification payload stream.
// Properties: notifications of any size up to the MTU reassemble to the same frames as the
// stream fed whole, and L2CAPStream.receive gives the same frames; every frame fragmented with
// BLEFragmentation.fragments (each fragment within the write length, concatenation = frame)
// reassembles to itself alone; L2CAPStream's send queue hands out exactly what was enqueued
// whatever the stream accepts per write.
import FuzzSupport
import SMPBLETransport
import SMPCore

func frames(_ events: [SMPFramingEvent]) -> [[UInt8]] {
    events.compactMap { if case .frame(let frame) = $0 { frame } else { nil } }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 3 else { return 0 }
    let input = UnsafeBufferPointer(start: start, count: count)
    let attMTU = 23 + Int(input[0]) * 2
    let writeLength = BLEFragmentation.maximumWriteLength(attMTU: attMTU)
    check((20...514).contains(writeLength), "write length \(writeLength) for MTU \(attMTU)")
    var splitter = Splitter(seed: UInt16(input[1]) << 8 | UInt16(input[2]))
    let stream = Array(input.dropFirst(3))

    var whole = SMPStreamDecoder()
    let expected = whole.feed(stream)
    var reassembler = SMPStreamDecoder()
    var l2cap = L2CAPStream()
    var events: [SMPFramingEvent] = []
    var l2capFrames: [[UInt8]] = []
    for notification in splitter.notifications(stream, largest: writeLength) {
        check(notification.count <= writeLength, "notification over the write length")
        events += reassembler.feed(notification)
        l2capFrames += l2cap.receive(notification)
    }
    check(events == expected, "reassembly depends on notification sizes")
    let received = frames(expected)
    check(l2capFrames == received, "L2CAPStream differs from the stream decoder")

    for frame in received {
        let fragments = BLEFragmentation.fragments(of: frame, maximumWriteLength: writeLength)
        check(fragments.allSatisfy { !$0.isEmpty && $0.count <= writeLength }, "fragment size out of range")
        check(Array(fragments.joined()) == frame, "fragments do not concatenate to the frame")
        var device = SMPStreamDecoder()
        var out: [SMPFramingEvent] = []
        for fragment in fragments { out += device.feed(fragment) }
        check(out == [.frame(frame)], "a fragmented frame does not reassemble to itself")
    }

    // The L2CAP send queue: partial writes hand out exactly what was enqueued, in order.
    var sender = L2CAPStream()
    for frame in received { sender.enqueue(frame) }
    var sent: [UInt8] = []
    var guardCount = 0
    while !sender.isDrained && guardCount < 100_000 {
        guardCount += 1
        let pending = sender.pendingBytes
        let take = min(pending.count, 1 + Int(splitter.next() % UInt64(writeLength)))
        sent += pending.prefix(take)
        sender.didWrite(take)
    }
    check(sent == received.flatMap { $0 }, "L2CAP send queue lost or reordered bytes")
    return 0
}
