// Fuzz target `console-deframer`: SerialFrameDecoder (SMP over a console UART shared with log
// text) fed the input in arbitrary splits, and SerialFraming.encode on what comes out.
//
// Input: bytes 0–1 seed the split points; byte 2 sets the largest chunk and, with its high bit,
// small packet/line limits; the rest is the serial stream.
// Properties: the events do not depend on the split; every message out, re-encoded with
// SerialFraming.encode (at a line length from the input) and fed again in another split, comes
// out unchanged with no other event; console lines never exceed the line limit (+1: a run without
// a newline is flushed when it is one byte over).
import FuzzSupport
import SMPCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    guard let start, count >= 3 else { return 0 }
    let input = UnsafeBufferPointer(start: start, count: count)
    var splitter = Splitter(seed: UInt16(input[0]) << 8 | UInt16(input[1]), largest: Int(input[2] & 0x7f) + 1)
    let small = input[2] & 0x80 != 0
    let maximumPacketSize = small ? 12 + Int(input[1] & 0x3f) : 2 + 65535
    let maximumLineLength = small ? 8 + Int(input[0] & 0x3f) : 4096
    let stream = Array(input.dropFirst(3))

    func decoder() -> SerialFrameDecoder {
        SerialFrameDecoder(maximumPacketSize: maximumPacketSize, maximumLineLength: maximumLineLength)
    }
    var whole = decoder()
    let expected = whole.feed(stream)
    var split = decoder()
    var events: [SMPFramingEvent] = []
    for chunk in splitter.split(stream) {
        events += split.feed(chunk)
    }
    check(events == expected, "events depend on the split: \(events.count) vs \(expected.count)")
    check(split.isReceivingPacket == whole.isReceivingPacket, "packet state depends on the split")

    var frames: [[UInt8]] = []
    for event in expected {
        switch event {
        case .frame(let frame):
            check(frame.count + 4 <= maximumPacketSize, "message of \(frame.count) bytes over the packet limit")
            frames.append(frame)
        case .console(let line):
            // A run with no newline is flushed when it reaches the limit (newline included).
            check(line.count <= maximumLineLength, "console line of \(line.count) bytes over the limit")
        case .discarded(let error):
            _ = error.description
        }
    }
    // Round trip: encode each message, decode it again.
    let lineLength = 7 + Int(input[1] % 200)
    var again = SerialFrameDecoder(maximumPacketSize: 2 + 65535, maximumLineLength: 4096)
    var out: [SMPFramingEvent] = []
    var encoded: [UInt8] = []
    for frame in frames {
        guard let lines = try? SerialFraming.encode(frame, maximumLineLength: lineLength) else {
            fatalError("a decoded message of \(frame.count) bytes does not encode")
        }
        for line in lines.split(separator: 0x0a) {
            check(line.count + 1 <= max(lineLength, 7), "encoded line of \(line.count + 1) bytes over \(lineLength)")
        }
        encoded += lines
    }
    for chunk in splitter.split(encoded) {
        out += again.feed(chunk)
    }
    check(out == frames.map { .frame($0) }, "re-encoded messages decode differently")
    return 0
}
