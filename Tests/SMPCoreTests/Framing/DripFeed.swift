import SMPCore
import SMPTestSupport
import Testing

/// Feeds a framer the same input in every way bytes can arrive — whole, byte by byte, split
/// in two at every index, and in seeded random chunks — and checks that the events are always
/// the same (NIO's `ByteToMessageDecoderVerifier`, for our framers).
enum DripFeed {
    static func verify<D: SMPFrameDecoding>(
        _ makeDecoder: () -> D,
        input: [UInt8],
        expected: [SMPFramingEvent],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        func run(_ chunks: [ArraySlice<UInt8>]) -> [SMPFramingEvent] {
            var decoder = makeDecoder()
            return chunks.flatMap { decoder.feed($0) }
        }
        #expect(run([input[...]]) == expected, "whole input", sourceLocation: sourceLocation)
        #expect(run(input.indices.map { input[$0...$0] }) == expected, "byte by byte", sourceLocation: sourceLocation)
        for split in 0...input.count {
            let events = run([input[..<split], input[split...]])
            if events != expected {
                Issue.record("split at \(split): \(events)", sourceLocation: sourceLocation)
                return
            }
        }
        var generator = TestBytes.SeededGenerator(seed: UInt64(input.count))
        for _ in 0..<20 {
            var chunks: [ArraySlice<UInt8>] = []
            var start = 0
            while start < input.count {
                let end = min(input.count, start + Int.random(in: 1...17, using: &generator))
                chunks.append(input[start..<end])
                start = end
            }
            #expect(run(chunks) == expected, "random chunks", sourceLocation: sourceLocation)
        }
    }
}
