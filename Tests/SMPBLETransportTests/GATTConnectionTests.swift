import Foundation
import MCUmgr
import SMPCore
import SMPTestSupport
import Testing

@testable import SMPBLETransport

/// A link driven by the test: records writes, refuses some (a full buffer), and lets the test
/// push notifications and a disconnection.
final class ScriptedLink: GATTLink, @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var writeLength: Int
    private var recorded: [[UInt8]] = []
    private var refusals: Int
    private var waits = 0
    let events: AsyncStream<GATTLinkEvent>
    private let continuation: AsyncStream<GATTLinkEvent>.Continuation

    init(maximumWriteLength: Int, refusing refusals: Int = 0) {
        writeLength = maximumWriteLength
        self.refusals = refusals
        (events, continuation) = AsyncStream.makeStream(of: GATTLinkEvent.self)
    }

    var maximumWriteLength: Int {
        get { lock.withLock { writeLength } }
        set { lock.withLock { writeLength = newValue } }
    }

    var writes: [[UInt8]] { lock.withLock { recorded } }
    var waitCount: Int { lock.withLock { waits } }

    func writeWithoutResponse(_ value: [UInt8]) async throws -> Bool {
        lock.withLock {
            if refusals > 0 {
                refusals -= 1
                return false
            }
            recorded.append(value)
            return true
        }
    }

    func waitUntilReadyForWrite() async throws {
        lock.withLock { waits += 1 }
        await Task.yield()
    }

    func disconnect() async {
        continuation.yield(.disconnected(nil))
        continuation.finish()
    }

    func notify(_ value: [UInt8]) { continuation.yield(.notification(value)) }

    func drop() {
        continuation.yield(.disconnected(SMPTransportError(.disconnected, "test")))
        continuation.finish()
    }
}

/// An echo response frame carrying `text`.
func echoResponse(_ text: String, sequence: UInt8) throws -> [UInt8] {
    var payload: [UInt8] = [0xa1, 0x61, 0x72]  // {"r": text}
    let utf8 = Array(text.utf8)
    payload += utf8.count < 24 ? [0x60 | UInt8(utf8.count)] : [0x79, UInt8(utf8.count >> 8), UInt8(utf8.count & 0xff)]
    payload += utf8
    let header = SMPHeader(
        version: .v2,
        operation: .writeResponse,
        flags: 0,
        length: UInt16(payload.count),
        group: .os,
        sequence: sequence,
        command: 0
    )
    return try SMPFrame(header: header, payload: payload).bytes
}

@Suite struct GATTConnectionTests {
    static func frame(size: Int, sequence: UInt8 = 1) throws -> [UInt8] {
        // 12 bytes around a short text, 14 around one of 24 bytes or more.
        let text = size - 14 >= 24 ? size - 14 : max(0, size - 12)
        return try echoResponse(String(repeating: "x", count: text), sequence: sequence)
    }

    /// Every ATT MTU from 23 to 517: writes never exceed MTU − 3 and rebuild the frame.
    @Test func fragmentsToTheWriteLengthAtEveryMTU() async throws {
        let frame = try Self.frame(size: 1200)
        for mtu in 23...517 {
            let link = ScriptedLink(maximumWriteLength: mtu - 3)
            let connection = try await GATTTransport(endpointDescription: "test") { link }.connect()
            try await connection.send(frame)
            let writes = link.writes
            #expect(writes.allSatisfy { $0.count <= mtu - 3 && !$0.isEmpty }, "MTU \(mtu)")
            #expect(writes.count == (frame.count + mtu - 4) / (mtu - 3), "MTU \(mtu)")
            #expect(Array(writes.joined()) == frame, "MTU \(mtu)")
            await connection.close()
        }
    }

    /// The write length is read when sending, not when the connection was made.
    @Test func readsTheWriteLengthAtSendTime() async throws {
        let link = ScriptedLink(maximumWriteLength: 20)
        let connection = try await GATTTransport(endpointDescription: "test") { link }.connect()
        link.maximumWriteLength = 244
        let frame = try Self.frame(size: 500)
        try await connection.send(frame)
        #expect(link.writes.map(\.count) == [244, 244, 12])
        #expect(connection.maximumFrameSize == 384)
    }

    /// A full buffer is waited out, never an error, and no byte is lost or reordered.
    @Test func fullWriteBufferIsBackPressure() async throws {
        let link = ScriptedLink(maximumWriteLength: 20, refusing: 25)
        let connection = try await GATTTransport(endpointDescription: "test") { link }.connect()
        let frame = try Self.frame(size: 100)
        try await connection.send(frame)
        #expect(link.waitCount == 25)
        #expect(Array(link.writes.joined()) == frame)
    }

    /// Without device reassembly a frame must fit one write.
    @Test func withoutReassemblyAFrameMustFitOneWrite() async throws {
        let link = ScriptedLink(maximumWriteLength: 244)
        let connection = try await GATTTransport(
            endpointDescription: "test",
            configuration: .init(deviceReassembles: false)
        ) { link }.connect()
        #expect(connection.maximumFrameSize == 244)
        #expect(!connection.frameSizeFollowsDevice)
        await #expect(throws: SMPTransportError(.frameTooLarge)) {
            try await connection.send(try Self.frame(size: 245))
        }
        try await connection.send(try Self.frame(size: 244))
        #expect(link.writes.count == 1)
    }

    /// Concurrent sends keep each frame's writes together.
    @Test func concurrentFramesAreNotInterleaved() async throws {
        let link = ScriptedLink(maximumWriteLength: 20, refusing: 7)
        let connection = try await GATTTransport(endpointDescription: "test") { link }.connect()
        let frames = try (0..<8).map { try Self.frame(size: 90 + $0 * 7, sequence: UInt8($0)) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for frame in frames { group.addTask { try await connection.send(frame) } }
            try await group.waitForAll()
        }
        var decoder = SMPStreamDecoder()
        let rebuilt = decoder.feed(Array(link.writes.joined())).compactMap { event -> [UInt8]? in
            if case .frame(let frame) = event { frame } else { nil }
        }
        #expect(Set(rebuilt) == Set(frames))
        #expect(rebuilt.count == frames.count)
    }

    /// Notifications are reassembled by header length however they are cut: one response over
    /// many notifications, several in one, duplicates and interleaved sequence numbers pass on.
    @Test(arguments: [1, 7, 20, 61, 244, 495])
    func reassemblesNotifications(size: Int) async throws {
        let link = ScriptedLink(maximumWriteLength: 244)
        let connection = try await GATTTransport(endpointDescription: "test") { link }.connect()
        let responses = try [
            Self.frame(size: 300, sequence: 3), Self.frame(size: 40, sequence: 1), Self.frame(size: 40, sequence: 1),
            Self.frame(size: 900, sequence: 2), Self.frame(size: 13, sequence: 4),
        ]
        let stream = Array(responses.joined())
        for start in stride(from: 0, to: stream.count, by: size) {
            link.notify(Array(stream[start..<min(start + size, stream.count)]))
        }
        var received: [[UInt8]] = []
        for try await frame in connection.frames {
            received.append(frame)
            if received.count == responses.count { break }
        }
        #expect(received == responses)
    }

    /// Bytes that cannot start a header are skipped; the next response still arrives.
    @Test func strayBytesDoNotBlockLaterResponses() async throws {
        let link = ScriptedLink(maximumWriteLength: 244)
        let connection = try await GATTTransport(endpointDescription: "test") { link }.connect()
        let response = try Self.frame(size: 50, sequence: 9)
        link.notify([0xff, 0xfe, 0xf0])
        link.notify(response)
        var iterator = connection.frames.makeAsyncIterator()
        #expect(try await iterator.next() == response)
    }

    /// A response whose tail never came (Zephyr drops the rest of a response when a
    /// notification cannot be queued) is dropped after a silence, so the next response is read
    /// from its own header instead of being swallowed by the stale head.
    @Test func aPartialResponseIsDroppedAfterASilence() async throws {
        let link = ScriptedLink(maximumWriteLength: 244)
        let clock = ManualClock()
        let connection = try await GATTTransport(
            endpointDescription: "test",
            configuration: .init(reassemblyIdleTimeout: .milliseconds(20), clock: SMPClock(clock))
        ) { link }.connect()
        let whole = try Self.frame(size: 40, sequence: 1)
        let truncated = try Self.frame(size: 300, sequence: 2)
        let next = try Self.frame(size: 50, sequence: 3)
        var iterator = connection.frames.makeAsyncIterator()
        // The whole frame shares a notification with the head, so receiving it proves the head
        // is buffered before the silence starts.
        link.notify(whole + truncated.prefix(30))
        #expect(try await iterator.next() == whole)
        clock.advance(by: .milliseconds(21))
        link.notify(next)
        link.drop()
        #expect(try await iterator.next() == next)
    }

    /// Within the idle limit the next notification continues the response it belongs to.
    @Test func aPartialResponseWaitsWithinTheLimit() async throws {
        let link = ScriptedLink(maximumWriteLength: 244)
        let clock = ManualClock()
        let connection = try await GATTTransport(
            endpointDescription: "test",
            configuration: .init(reassemblyIdleTimeout: .milliseconds(20), clock: SMPClock(clock))
        ) { link }.connect()
        let whole = try Self.frame(size: 40, sequence: 1)
        let split = try Self.frame(size: 300, sequence: 2)
        var iterator = connection.frames.makeAsyncIterator()
        link.notify(whole + split.prefix(30))
        #expect(try await iterator.next() == whole)
        // Exactly the limit is still within it.
        clock.advance(by: .milliseconds(20))
        link.notify(Array(split.dropFirst(30)))
        link.drop()
        #expect(try await iterator.next() == split)
    }

    /// A dropped link ends the frames with `.disconnected`; sends after close fail.
    @Test func disconnectionEndsTheFrames() async throws {
        let link = ScriptedLink(maximumWriteLength: 244)
        let connection = try await GATTTransport(endpointDescription: "test") { link }.connect()
        link.drop()
        await #expect(throws: SMPTransportError(.disconnected)) {
            for try await _ in connection.frames {}
        }
        await connection.close()
        await #expect(throws: SMPTransportError(.disconnected)) {
            try await connection.send(try Self.frame(size: 20))
        }
    }

    /// A factory error becomes `.connectionFailed`.
    @Test func factoryErrorsBecomeConnectionFailed() async throws {
        struct Refused: Error {}
        let transport = GATTTransport(endpointDescription: "ble://nowhere") { throw Refused() }
        await #expect(throws: SMPTransportError(.connectionFailed)) { _ = try await transport.connect() }
    }
}
