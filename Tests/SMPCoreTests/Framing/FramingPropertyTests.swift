import Foundation
import SMPCore
import SMPTestSupport
import Testing

/// Property tests over random streams of random frames from a seeded generator (each seed
/// replays exactly): whatever the frames and however the bytes are split, every framer gives back
/// exactly what was sent.
struct FramingPropertyTests {
    static let seeds: [UInt64] = Array(1...40)

    @Test(arguments: seeds)
    func rawStreamReassemblesAnySplitOfAnyStreamOfFrames(seed: UInt64) {
        var random = TestBytes.SeededGenerator(seed: seed)
        let frames = RandomFrames.frames(using: &random)
        let stream = frames.flatMap { $0 }
        for _ in 0..<10 {
            var decoder = SMPStreamDecoder()
            let events = RandomFrames.split(stream, using: &random).flatMap { decoder.feed($0) }
            #expect(events == frames.map { .frame($0) }, "seed \(seed)")
            #expect(decoder.bufferedByteCount == 0, "seed \(seed)")
        }
    }

    @Test(arguments: seeds)
    func consoleFramingReassemblesAnySplitOfFramesBetweenLogLines(seed: UInt64) throws {
        var random = TestBytes.SeededGenerator(seed: seed)
        let frames = RandomFrames.frames(using: &random)
        var stream: [UInt8] = []
        var expected: [SMPFramingEvent] = []
        for frame in frames {
            if Bool.random(using: &random) {
                let line = RandomFrames.logLine(using: &random)
                stream += line + [0x0a]
                expected.append(.console(line))
            }
            let lineLength = Int.random(in: 7...300, using: &random)
            let encoded = try SerialFraming.encode(frame, maximumLineLength: lineLength)
            #expect(encoded.split(separator: 0x0a).allSatisfy { $0.count + 1 <= lineLength }, "seed \(seed)")
            stream += encoded
            expected.append(.frame(frame))
        }
        for _ in 0..<10 {
            var decoder = SerialFrameDecoder()
            let events = RandomFrames.split(stream, using: &random).flatMap { decoder.feed($0) }
            #expect(events == expected, "seed \(seed)")
            #expect(!decoder.isReceivingPacket, "seed \(seed)")
        }
    }

    @Test(arguments: seeds)
    func bleNotificationsOfAnyMTUReassemble(seed: UInt64) {
        var random = TestBytes.SeededGenerator(seed: seed)
        let frames = RandomFrames.frames(using: &random)
        let writeLength = BLEFragmentation.maximumWriteLength(attMTU: Int.random(in: 23...517, using: &random))
        var decoder = SMPStreamDecoder()
        var events: [SMPFramingEvent] = []
        for frame in frames {
            let fragments = BLEFragmentation.fragments(of: frame, maximumWriteLength: writeLength)
            #expect(fragments.allSatisfy { !$0.isEmpty && $0.count <= writeLength }, "seed \(seed)")
            #expect(Array(fragments.joined()) == frame, "seed \(seed)")
            for fragment in fragments { events += decoder.feed(fragment) }
        }
        #expect(events == frames.map { .frame($0) }, "seed \(seed)")
    }

    @Test(arguments: seeds)
    func rawStreamResynchronisesAfterBytesThatCannotStartAHeader(seed: UInt64) {
        var random = TestBytes.SeededGenerator(seed: seed)
        let frames = RandomFrames.frames(using: &random)
        var stream: [UInt8] = []
        var expected: [SMPFramingEvent] = []
        for frame in frames {
            // Noise whose every byte has a reserved bit or an undefined operation set.
            let noise = (0..<Int.random(in: 0...5, using: &random)).map { _ in
                UInt8.random(in: 0x80...0xff, using: &random)
            }
            stream += noise + frame
            if !noise.isEmpty { expected.append(.discarded(SMPError(.badFrameLength))) }
            expected.append(.frame(frame))
        }
        var decoder = SMPStreamDecoder()
        let events = RandomFrames.split(stream, using: &random).flatMap { decoder.feed($0) }
        #expect(events == expected, "seed \(seed)")
    }
}

/// Random well-formed SMP frames and random ways to cut a byte stream.
enum RandomFrames {
    static func frames(using random: inout TestBytes.SeededGenerator) -> [[UInt8]] {
        (0..<Int.random(in: 1...8, using: &random)).map { _ in frame(using: &random) }
    }

    static func frame(using random: inout TestBytes.SeededGenerator) -> [UInt8] {
        let length =
            [0, 1, 2, 7, Int.random(in: 0...600, using: &random), Int.random(in: 0...3000, using: &random)]
            .randomElement(using: &random) ?? 0
        var header = SMPHeader(
            version: Bool.random(using: &random) ? .v2 : .v1,
            operation: SMPOperation(rawValue: UInt8.random(in: 0...3, using: &random)),
            flags: UInt8.random(in: 0...255, using: &random),
            length: 0,
            group: SMPGroup(rawValue: UInt16.random(in: 0 ... .max, using: &random)),
            sequence: UInt8.random(in: 0...255, using: &random),
            command: UInt8.random(in: 0...255, using: &random)
        )
        let payload = (0..<length).map { _ in UInt8.random(in: 0...255, using: &random) }
        // At most 3000 bytes: the header's 16-bit length always holds it.
        header.length = UInt16(payload.count)
        return header.bytes + payload
    }

    /// Console text without newlines or SMP markers (printable ASCII).
    static func logLine(using random: inout TestBytes.SeededGenerator) -> [UInt8] {
        (0..<Int.random(in: 0...80, using: &random)).map { _ in UInt8.random(in: 0x20...0x7e, using: &random) }
    }

    /// Cuts bytes into chunks: sometimes byte by byte, sometimes large, sometimes empty.
    static func split(_ bytes: [UInt8], using random: inout TestBytes.SeededGenerator) -> [ArraySlice<UInt8>] {
        let largest = [1, 2, 7, 20, 244, 4096].randomElement(using: &random)!
        var chunks: [ArraySlice<UInt8>] = []
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + Int.random(in: 0...largest, using: &random))
            chunks.append(bytes[start..<end])
            start = end
        }
        return chunks
    }
}
