import SMPCore
import SMPTestSupport
import Testing

struct SMPStreamDecoderTests {
    static let echo = TestBytes.hex("0a00000900000000a161646568656c6c6f")
    static let reset = TestBytes.hex("0a00000100000605a0")
    static let empty = TestBytes.hex("0b00000000000000")

    @Test func dripFeedManyFrames() {
        DripFeed.verify(
            { SMPStreamDecoder() },
            input: Self.echo + Self.reset + Self.empty + Self.echo,
            expected: [.frame(Self.echo), .frame(Self.reset), .frame(Self.empty), .frame(Self.echo)]
        )
    }

    @Test func garbageBeforeAFrameIsSkippedAndReported() {
        DripFeed.verify(
            { SMPStreamDecoder() },
            input: [0xff, 0xe0, 0x17] + Self.echo,
            expected: [.discarded(SMPError(.badFrameLength)), .frame(Self.echo)]
        )
    }

    @Test func lengthsAboveTheLimitResynchronise() {
        var decoder = SMPStreamDecoder(maximumFrameSize: 16)
        // A header claiming 65535 bytes cannot be real under a 16-byte limit: slide to the next header.
        #expect(
            decoder.feed([0x0a, 0x00, 0xff, 0xff] + Self.reset) == [
                .discarded(SMPError(.badFrameLength)), .frame(Self.reset),
            ]
        )
    }

    @Test func resetDropsAPartialFrame() {
        var decoder = SMPStreamDecoder()
        #expect(decoder.feed(Self.echo.prefix(10)).isEmpty)
        #expect(decoder.bufferedByteCount == 10)
        decoder.reset()
        #expect(decoder.feed(Self.reset) == [.frame(Self.reset)])
    }

    @Test func largeStreamsDoNotAccumulate() {
        var decoder = SMPStreamDecoder()
        var frames = 0
        for _ in 0..<2_000 {
            frames += decoder.feed(Self.echo + Self.reset.prefix(3)).count
            frames += decoder.feed(Self.reset.dropFirst(3)).count
        }
        #expect(frames == 4_000)
        #expect(decoder.bufferedByteCount == 0)
    }
}

struct BLEFragmentationTests {
    @Test(arguments: 23...80)
    func fragmentsReassembleAtEveryMTU(_ mtu: Int) {
        let message =
            TestBytes.hex("0a00002e00010201a2636f6666182064646174615820")
            + (0..<32).map { UInt8($0) } + TestBytes.hex("0a00000100000605a0")
        let frameOne = Array(message.prefix(54))
        let frameTwo = Array(message.dropFirst(54))
        let size = BLEFragmentation.maximumWriteLength(attMTU: mtu)
        let fragments =
            BLEFragmentation.fragments(of: frameOne, maximumWriteLength: size)
            + BLEFragmentation.fragments(of: frameTwo, maximumWriteLength: size)
        #expect(fragments.allSatisfy { $0.count <= size })
        var decoder = SMPStreamDecoder()
        #expect(fragments.flatMap { decoder.feed($0) } == [.frame(frameOne), .frame(frameTwo)])
    }

    @Test func writeLengthIsMTUMinusTheATTHeader() {
        #expect(BLEFragmentation.maximumWriteLength(attMTU: 23) == 20)
        #expect(BLEFragmentation.maximumWriteLength(attMTU: 247) == 244)
        #expect(BLEFragmentation.maximumWriteLength(attMTU: 517) == 514)
        #expect(BLEFragmentation.maximumWriteLength(attMTU: 9000) == 514)
    }
}
