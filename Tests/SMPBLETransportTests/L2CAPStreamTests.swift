import SMPCore
import SMPLink
import Testing

@Suite struct L2CAPStreamTests {
    static let frames: [[UInt8]] = {
        (0..<5).compactMap { index in
            try? echoResponse(String(repeating: "abc", count: index * 40), sequence: UInt8(index))
        }
    }()

    /// Frames queued back to back leave in order however little the output stream takes.
    @Test(arguments: [1, 3, 64, 1000])
    func partialWritesKeepOrder(take: Int) {
        var stream = L2CAPStream()
        for frame in Self.frames { stream.enqueue(frame) }
        var written: [UInt8] = []
        while !stream.isDrained {
            let chunk = Array(stream.pendingBytes.prefix(take))
            written += chunk
            stream.didWrite(chunk.count)
        }
        #expect(written == Array(Self.frames.joined()))
        #expect(stream.pendingBytes.isEmpty)
    }

    /// Incoming bytes are cut into frames by header length, whatever the read sizes.
    @Test(arguments: [1, 7, 100, 4096])
    func readsAreCutByHeaderLength(size: Int) {
        var stream = L2CAPStream()
        let bytes = Array(Self.frames.joined())
        var received: [[UInt8]] = []
        for start in stride(from: 0, to: bytes.count, by: size) {
            received += stream.receive(bytes[start..<min(start + size, bytes.count)])
        }
        #expect(received == Self.frames)
    }

    /// A reset drops a partial frame and unsent bytes.
    @Test func resetForgetsPartialState() throws {
        var stream = L2CAPStream()
        let frame = try #require(Self.frames.last)
        #expect(stream.receive(frame.prefix(10)).isEmpty)
        stream.enqueue(frame)
        stream.reset()
        #expect(stream.isDrained)
        #expect(stream.receive(frame) == [frame])
    }
}
