// Fuzz target `raw-deframer`: SMPStreamDecoder (raw UART, L2CAP, BLE notifications) fed the
// input in arbitrary splits.
//
// Input: bytes 0–1 seed the split points and byte 2 sets the largest chunk (and, when its high
// bit is set, a small maximum frame size); the rest is the stream.
// Properties: the events do not depend on how the stream was split; every frame out parses as an
// SMPFrame and is within the maximum; the frames out, concatenated and fed again in another
// split, come out unchanged and with nothing discarded.
import FuzzSupport
import SMPCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 3 else { return 0 }
    let input = UnsafeBufferPointer(start: start, count: count)
    var splitter = Splitter(seed: UInt16(input[0]) << 8 | UInt16(input[1]), largest: Int(input[2] & 0x7f) + 1)
    let maximumFrameSize = input[2] & 0x80 != 0 ? SMPHeader.size + Int(input[2] & 0x3f) : SMPHeader.size + 65535
    let stream = Array(input.dropFirst(3))

    var whole = SMPStreamDecoder(maximumFrameSize: maximumFrameSize)
    let expected = whole.feed(stream)
    var split = SMPStreamDecoder(maximumFrameSize: maximumFrameSize)
    var events: [SMPFramingEvent] = []
    for chunk in splitter.split(stream) {
        events += split.feed(chunk)
    }
    check(events == expected, "events depend on the split: \(events.count) vs \(expected.count)")
    check(split.bufferedByteCount == whole.bufferedByteCount, "buffered bytes depend on the split")
    check(split.bufferedByteCount <= stream.count, "buffers more than it was fed")

    var frames: [[UInt8]] = []
    for event in expected {
        if case .frame(let frame) = event {
            check(frame.count <= maximumFrameSize, "frame of \(frame.count) bytes over the maximum")
            guard (try? SMPFrame(parsing: frame)) != nil else { fatalError("emitted frame does not parse") }
            frames.append(frame)
        }
    }
    // Whole frames in, the same frames out, nothing discarded, however they are split.
    var again = SMPStreamDecoder(maximumFrameSize: maximumFrameSize)
    var out: [SMPFramingEvent] = []
    for chunk in splitter.split(frames.flatMap { $0 }) {
        out += again.feed(chunk)
    }
    check(out == frames.map { .frame($0) }, "re-fed frames differ")
    check(again.bufferedByteCount == 0, "re-fed frames leave bytes buffered")

    // reset() really forgets: afterwards a clean frame decodes alone.
    split.reset()
    let ping: [UInt8] = [0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x07, 0x00]
    check(split.feed(ping) == [.frame(ping)], "reset did not clear the decoder")
    return 0
}
