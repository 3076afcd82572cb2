import Foundation
import SMPBytes
import SMPHCI
import SMPHCIHost
import SMPPOSIX
import SMPTestSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A controller of the test's own on a socket: it accepts our host, decodes its H4 packets with
/// SMPHCI's decoder and answers them as the specification says, by a script the test changes
/// (an answer per opcode, a peer's ATT answers per request), and lets the test send anything,
/// raw bytes included. A fake of the wire protocol, not a mock of our types.
///
/// Everything runs on one thread of its own (accept, read, answer); writes from the test go
/// through the same lock, so packets never interleave.
final class FakeController: Sendable {
    /// Where the host finds the fake.
    let address: HCIControllerAddress
    let state: Locked<FakeControllerState>

    /// Listens on 127.0.0.1 (any free port) or on a fresh Unix socket path.
    /// - Parameters:
    ///   - unix: a Unix-domain socket instead of TCP.
    ///   - delivery: how the fake cuts what it writes.
    ///   - peer: the peripheral the fake's radio finds, if any.
    init(unix: Bool = false, delivery: FakeDelivery = .whole, peer: FakePeer? = nil) throws {
        let (listener, address) = try unix ? Self.listenUnix() : Self.listenTCP()
        self.address = address
        state = Locked(FakeControllerState(listener: listener, delivery: delivery, peer: peer))
        let loop = FakeControllerLoop(state: state, unixPath: unix ? address.unixPath : nil)
        // Off the cooperative pool: the loop blocks in poll and read.
        BlockingReadLoop.start(name: "fake-hci-controller") {
            loop.run()
            return false
        }
    }

    deinit { stop() }

    /// Stops the fake: its thread closes both sockets within a poll slice.
    func stop() { state.withLock { $0.stopped = true } }

    /// The controller goes away: the host reads the end of the stream.
    func closeConnection() {
        state.withLock { state in
            if state.client >= 0 { _ = shutdown(state.client, Int32(SHUT_RDWR)) }
            state.stopped = true
        }
    }

    /// Answers a command with `answer` from now on.
    func answer(_ opcode: HCIOpcode, with answer: FakeAnswer) {
        state.withLock { $0.answers[opcode] = answer }
    }

    /// Answers an ATT request of the host with `answer` from now on.
    func peerAnswers(_ request: ATTOpcode, with answer: FakePeerAnswer) {
        state.withLock { $0.peerAnswers[request.rawValue] = answer }
    }

    /// Whether the fake frees each ACL buffer of the host at once, as a controller whose radio
    /// keeps up does; when not, the test frees them with Number Of Completed Packets.
    func completesPackets(_ completes: Bool) {
        state.withLock { $0.completesPackets = completes }
    }

    /// Writes raw H4 bytes, cut as ``FakeDelivery`` says.
    func send(_ bytes: [UInt8]) { state.withLock { $0.write(bytes) } }

    /// Writes an event.
    func send(_ event: HCIEventPacket) { send(H4Encoder.encode(.event(event))) }

    /// Writes an L2CAP PDU on a connection, cut to `fragmentSize` bytes per ACL packet.
    func send(_ pdu: L2CAPPDU, handle: UInt16 = FakePeer.handle, fragmentSize: Int = 27) {
        state.withLock { state in
            for packet in pdu.fragments(connectionHandle: handle, maximumDataLength: fragmentSize) {
                state.write(H4Encoder.encode(.acl(Self.controllerToHost(packet))))
            }
        }
    }

    /// A controller marks first fragments flushable toward the host (0b10), as LE controllers do.
    static func controllerToHost(_ packet: HCIACLDataPacket) -> HCIACLDataPacket {
        guard packet.packetBoundary == .firstNonFlushable else { return packet }
        return HCIACLDataPacket(
            connectionHandle: packet.connectionHandle,
            packetBoundary: .firstFlushable,
            data: packet.data
        )
    }

    /// Every packet the host sent so far.
    var received: [HCIPacket] { state.withLock { $0.received } }

    /// Waits for the host to send a packet that `predicate` accepts (one not waited for before),
    /// for at most a time no loaded machine reaches.
    /// - Returns: the packet, or `nil` (with an issue recorded by the caller) if it never came.
    func next(
        timeout: Duration = .seconds(60),
        where predicate: @escaping @Sendable (HCIPacket) -> Bool
    ) async throws -> HCIPacket? {
        try await RealIO.poll(timeout: timeout) {
            state.withLock { state -> HCIPacket? in
                guard
                    let index = state.received.indices.dropFirst(state.cursor).first(where: {
                        predicate(state.received[$0])
                    })
                else { return nil }
                state.cursor = index + 1
                return state.received[index]
            }
        }
    }

    /// Waits for a command with this opcode.
    func command(_ opcode: HCIOpcode) async throws -> HCICommandPacket? {
        guard case .command(let command) = try await next(where: { $0.command?.opcode == opcode }) else { return nil }
        return command
    }

    /// Waits for an L2CAP PDU from the host (reassembled by the fake) that `predicate` accepts,
    /// and takes it.
    func pdu(where predicate: @escaping @Sendable (L2CAPPDU) -> Bool) async throws -> L2CAPPDU? {
        try await RealIO.poll(timeout: .seconds(60)) {
            state.withLock { state -> L2CAPPDU? in
                guard let index = state.pdus.firstIndex(where: predicate) else { return nil }
                return state.pdus.remove(at: index)
            }
        }
    }

    private static func listenTCP() throws -> (Int32, HCIControllerAddress) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FakeControllerError("socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard bound else {
            _ = close(fd)
            throw FakeControllerError("bind/listen on 127.0.0.1: errno \(errno)")
        }
        return (fd, .tcp(host: "127.0.0.1", port: UInt16(bigEndian: address.sin_port)))
    }

    private static func listenUnix() throws -> (Int32, HCIControllerAddress) {
        // Short, so it fits sun_path wherever the temporary directory is.
        let path = "/tmp/fake-hci-\(UInt32.random(in: 0...UInt32.max)).sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FakeControllerError("socket: errno \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 && listen(fd, 1) == 0
            }
        }
        guard bound else {
            _ = close(fd)
            throw FakeControllerError("bind/listen on \(path): errno \(errno)")
        }
        return (fd, .unix(path: path))
    }
}

struct FakeControllerError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

extension HCIPacket {
    /// The command, if this is one.
    var command: HCICommandPacket? {
        guard case .command(let command) = self else { return nil }
        return command
    }

    /// The ACL packet, if this is one.
    var acl: HCIACLDataPacket? {
        guard case .acl(let packet) = self else { return nil }
        return packet
    }
}

extension HCIControllerAddress {
    var unixPath: String? {
        guard case .unix(let path) = self else { return nil }
        return path
    }
}
