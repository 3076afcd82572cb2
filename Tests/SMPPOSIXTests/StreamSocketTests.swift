import Foundation
import SMPPOSIX
import Testing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A listening socket of the test's own (TCP on 127.0.0.1 or Unix), whose accepted peer the
/// test drives with plain system calls.
final class TestListener: Sendable {
    let fd: Int32
    let port: UInt16
    let path: String?

    init(unixPath: String? = nil, listening: Bool = true) throws {
        (fd, port) = try unixPath.map { (try Self.listenUnix($0), 0) } ?? Self.listenTCP(listening: listening)
        path = unixPath
    }

    private static func listenUnix(_ path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(bound == 0 && listen(fd, 4) == 0)
        return fd
    }

    private static func listenTCP(listening: Bool) throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        try #require(bound && (!listening || listen(fd, 4) == 0))
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// The connected peer (blocking: call after the client connected, which the backlog allows).
    func accept() -> Int32 {
        #if canImport(Glibc)
            Glibc.accept(fd, nil, nil)
        #else
            Darwin.accept(fd, nil, nil)
        #endif
    }

    func close() {
        _ = systemClose(fd)
        if let path { _ = unlink(path) }
    }
}

@Suite("StreamSocket", .timeLimit(.minutes(5)))
struct StreamSocketTests {
    @Test func aPortNobodyListensOnIsConnectionRefused() throws {
        // Bound, not listening: the port is ours and refuses connections.
        let listener = try TestListener(listening: false)
        defer { listener.close() }
        let error = #expect(throws: SystemCallError.self) {
            try StreamSocket(connectingTo: "127.0.0.1", port: listener.port)
        }
        #expect(error?.code == ECONNREFUSED)
        #expect(error?.operation == "connect")
        #expect(error?.subject == "127.0.0.1:\(listener.port)")
    }

    @Test func readsWhatArrivesThenNilWhenThePeerCloses() async throws {
        let listener = try TestListener()
        defer { listener.close() }
        let socket = try StreamSocket(connectingTo: "127.0.0.1", port: listener.port)
        defer { socket.close() }
        #expect(socket.peerDescription == "127.0.0.1:\(listener.port)")
        let peer = listener.accept()
        try #require(peer >= 0)
        #expect(try socket.read(timeout: .milliseconds(10)) == [], "silence is a timeout, not an end")
        _ = [UInt8]([1, 2, 3]).withUnsafeBytes { write(peer, $0.baseAddress, 3) }
        _ = systemClose(peer)
        var received: [UInt8] = []
        // Bounded: the end comes right after the bytes.
        for _ in 0..<1000 {
            guard let bytes = try socket.read(timeout: .seconds(60)) else { break }
            received += bytes
        }
        #expect(received == [1, 2, 3])
        #expect(try socket.read(timeout: .seconds(60)) == nil, "the end stays the end")
    }

    /// The peer is gone: a write fails with EPIPE (the peer's reset may come first), and the
    /// process lives on — a SIGPIPE would end this test run here.
    @Test func aWriteToAPeerThatClosedIsAnErrorNotASignal() throws {
        let listener = try TestListener()
        defer { listener.close() }
        let socket = try StreamSocket(connectingTo: "127.0.0.1", port: listener.port)
        defer { socket.close() }
        _ = systemClose(listener.accept())
        var failure: SystemCallError?
        for _ in 0..<1000 where failure == nil {
            do {
                try socket.write(Array(repeating: 0x55, count: 1024))
                Thread.sleep(forTimeInterval: 0.001)
            } catch {
                failure = error
            }
        }
        let error = try #require(failure, "writes to a closed peer kept succeeding")
        #expect([EPIPE, ECONNRESET].contains(error.code), "\(error)")
        #expect(error.operation == "write")
    }

    @Test func closeEndsABlockedReadAndLaterWritesFail() async throws {
        let listener = try TestListener()
        defer { listener.close() }
        let socket = try StreamSocket(connectingTo: "127.0.0.1", port: listener.port)
        let peer = listener.accept()
        defer { _ = systemClose(peer) }
        let reader = OnThread { try socket.read(timeout: nil) == nil }
        try await Task.sleep(for: .milliseconds(20))
        socket.close()
        #expect(try await reader.value)
        #expect(socket.isClosed)
        let error = #expect(throws: SystemCallError.self) { try socket.write([1]) }
        #expect(error?.code == EBADF)
        socket.close()
    }

    @Test func aUnixSocketCarriesBytesBothWays() throws {
        let path = "/tmp/stream-socket-\(UInt32.random(in: 0...UInt32.max)).sock"
        let listener = try TestListener(unixPath: path)
        defer { listener.close() }
        let socket = try StreamSocket(connectingToUnixPath: path)
        defer { socket.close() }
        #expect(socket.peerDescription == path)
        let peer = listener.accept()
        defer { _ = systemClose(peer) }
        try socket.write([9, 8, 7])
        var buffer = [UInt8](repeating: 0, count: 3)
        #expect(buffer.withUnsafeMutableBytes { read(peer, $0.baseAddress, 3) } == 3)
        #expect(buffer == [9, 8, 7])
        _ = [UInt8]([6]).withUnsafeBytes { write(peer, $0.baseAddress, 1) }
        #expect(try socket.read(timeout: .seconds(60)) == [6])
    }

    /// The limit is `sun_path`'s size less its terminating zero: 107 bytes on Linux.
    @Test(arguments: [
        (String(repeating: "x", count: 200), ENAMETOOLONG),
        ("/tmp/" + String(repeating: "y", count: 103), ENAMETOOLONG),
        ("", EINVAL),
    ])
    func aUnixPathThatDoesNotFitIsRefusedBeforeConnecting(_ path: String, _ code: Int32) {
        let error = #expect(throws: SystemCallError.self) { try StreamSocket(connectingToUnixPath: path) }
        #expect(error?.code == code)
        #expect(error?.reason.contains("a socket path has 1 to") == true, "\(String(describing: error))")
    }

    /// The longest path that fits goes to `connect`, which finds no socket there.
    @Test func theLongestPathThatFitsIsTried() {
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        let path = "/tmp/" + String(repeating: "z", count: capacity - 1 - 5)
        let error = #expect(throws: SystemCallError.self) { try StreamSocket(connectingToUnixPath: path) }
        #expect(error?.code == ENOENT, "\(String(describing: error))")
    }

    @Test func aUnixPathWithNoSocketIsENOENT() {
        let path = "/tmp/no-socket-\(UInt32.random(in: 0...UInt32.max))"
        let error = #expect(throws: SystemCallError.self) { try StreamSocket(connectingToUnixPath: path) }
        #expect(error?.code == ENOENT)
        #expect(error?.subject == path)
    }
}
