import Foundation
import SMPBytes
import SMPHCI
import Testing

@testable import SMPHCIHost

/// A channel whose reads are scripted: each read takes the next result; once they run out it
/// reads as silence until closed, then as ended.
final class ScriptedChannel: HCIByteChannel {
    private let reads: Locked<[Result<[UInt8]?, FakeControllerError>]>
    private let writes = Locked<[[UInt8]]>([])
    private let closed = Locked(false)

    init(_ reads: [Result<[UInt8]?, FakeControllerError>]) { self.reads = Locked(reads) }

    func read(timeout: Duration?) throws -> [UInt8]? {
        if closed.withLock({ $0 }) { return nil }
        let next = reads.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let next else {
            // Silence: a short real pause, as a socket's timed read would take.
            Thread.sleep(forTimeInterval: 0.005)
            return []
        }
        return try next.get()
    }

    func write(_ bytes: [UInt8]) throws {
        guard !closed.withLock({ $0 }) else { throw FakeControllerError("closed") }
        writes.withLock { $0.append(bytes) }
    }

    func close() { closed.withLock { $0 = true } }

    var written: [[UInt8]] { writes.withLock { $0 } }
    var isClosed: Bool { closed.withLock { $0 } }
}

@Suite(.timeLimit(.minutes(5)))
struct H4LinkTests {
    /// Every input until the link ends (or `limit` packets).
    static func inputs(_ link: H4Link, packets limit: Int = 100) async -> (
        packets: [HCIPacket], idle: Bool, end: (any Error)?
    ) {
        var packets: [HCIPacket] = []
        var idle = false
        for await input in link.inputs {
            switch input {
            case .packet(let packet):
                packets.append(packet)
                if packets.count == limit { return (packets, idle, nil) }
            case .idle: idle = true
            case .ended(let error): return (packets, idle, error)
            }
        }
        return (packets, idle, nil)
    }

    static let reset = HCI.CommandComplete(numHCICommandPackets: 1, opcode: .reset, returnParameters: [0]).packet

    @Test func packetsCutAnywhereComeOutWholeInOrder() async throws {
        let bytes =
            H4Encoder.encode(.event(Self.reset))
            + H4Encoder.encode(
                .acl(HCIACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [1, 2, 3]))
            )
        let channel = ScriptedChannel([
            .success(Array(bytes[0..<2])), .success([]), .success(Array(bytes[2..<9])), .success(Array(bytes[9...])),
            .success(nil),
        ])
        let link = H4Link(channel: channel, description: "scripted")
        let (packets, idle, end) = await Self.inputs(link)
        #expect(
            packets == [
                .event(Self.reset),
                .acl(HCIACLDataPacket(connectionHandle: 1, packetBoundary: .firstFlushable, data: [1, 2, 3])),
            ]
        )
        #expect(idle, "an empty read is a chance to check deadlines")
        #expect((end as? HCIError)?.message.contains("closed the connection") == true, "\(String(describing: end))")
    }

    @Test func aFailedReadEndsTheLinkWithItsErrorAndClosesTheChannel() async throws {
        let channel = ScriptedChannel([.success([0x04]), .failure(FakeControllerError("EIO"))])
        let link = H4Link(channel: channel, description: "scripted")
        let (packets, _, end) = await Self.inputs(link)
        #expect(packets.isEmpty)
        #expect((end as? FakeControllerError)?.description == "EIO")
        #expect(channel.isClosed)
    }

    @Test(arguments: [UInt8(0x00), 0x06, 0x7F, 0xFF])
    func aByteThatIsNoIndicatorEndsTheLink(_ byte: UInt8) async throws {
        let channel = ScriptedChannel([.success(H4Encoder.encode(.event(Self.reset)) + [byte, 0x0E, 0x00])])
        let link = H4Link(channel: channel, description: "scripted")
        let (packets, _, end) = await Self.inputs(link)
        #expect(packets == [.event(Self.reset)], "the packet before the bad byte still counts")
        #expect((end as? HCIError)?.code == .unknownPacketIndicator)
        #expect(channel.isClosed)
    }

    /// A write racing with the reader's end reports why the link ended, not the error of the
    /// channel the reader closed (found by HCIHostEventTests: a scan failed with EBADF).
    @Test func aWriteAfterTheEndFailsWithTheEndsReason() async throws {
        let channel = ScriptedChannel([.success([0x09])])
        let link = H4Link(channel: channel, description: "scripted")
        let (_, _, end) = await Self.inputs(link)
        #expect((end as? HCIError)?.code == .unknownPacketIndicator)
        let error = #expect(throws: HCIError.self) { try link.send(.command(HCICommandPacket(HCI.Reset()))) }
        #expect(error?.code == .unknownPacketIndicator)
    }

    @Test func sendWritesTheIndicatorAndThePacket() throws {
        let channel = ScriptedChannel([])
        let link = H4Link(channel: channel, description: "scripted")
        defer { link.close() }
        try link.send(.command(HCICommandPacket(HCI.Reset())))
        #expect(channel.written == [[0x01, 0x03, 0x0C, 0x00]])
    }

    @Test func closingEndsTheInputs() async throws {
        let channel = ScriptedChannel([])
        let link = H4Link(channel: channel, description: "scripted")
        link.close()
        let (_, _, end) = await Self.inputs(link)
        #expect(end is HCIError)
        #expect(throws: (any Error).self) { try link.send(.command(HCICommandPacket(HCI.Reset()))) }
    }
}
