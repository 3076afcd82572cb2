import Foundation
import SMPBytes
import SMPTestSupport
import Testing

@testable import SMPPOSIX

/// The datagrams a loop's handlers saw, by socket: filled on the loop's thread, read by the test.
private final class Received: Sendable {
    private let bySocket = Locked<[Int: [[UInt8]]]>([:])

    func add(_ socket: Int, _ bytes: [UInt8]) { bySocket.withLock { $0[socket, default: []].append(bytes) } }
    func of(_ socket: Int) -> [[UInt8]] { bySocket.withLock { $0[socket] ?? [] } }
}

@Suite("UDPReceiveLoop")
struct UDPReceiveLoopTests {
    /// Waits until `condition` holds; the bound is an event-sized one (the datagrams are local).
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        try await RealIO.poll(timeout: .seconds(60)) { condition() ? true : nil } ?? false
    }

    @Test("one thread receives for many sockets, each datagram at its own socket's handler, in order")
    func manySockets() async throws {
        let loop = try UDPReceiveLoop(name: "udp-loop-many")
        defer { loop.stop() }
        let received = Received()
        let servers = try (0..<5).map { _ in try UDPSocket(bindingTo: "127.0.0.1", port: 0) }
        defer { for server in servers { server.close() } }
        for (index, server) in servers.enumerated() {
            loop.add(server, maximumLength: 64) { bytes, _ in received.add(index, bytes) }
        }
        let clients = try servers.map { try UDPSocket(connectingTo: "127.0.0.1", port: $0.localAddress.port) }
        defer { for client in clients { client.close() } }
        for round in 0..<40 {
            for (index, client) in clients.enumerated() { try client.send([UInt8(index), UInt8(round)]) }
        }
        let all = try await Self.eventually { (0..<5).allSatisfy { received.of($0).count == 40 } }
        #expect(all, "\((0..<5).map { received.of($0).count })")
        for index in 0..<5 {
            #expect(received.of(index) == (0..<40).map { [UInt8(index), UInt8($0)] })
        }
    }

    @Test("a removed socket's datagrams are not delivered; a socket added later on the same number is")
    func removeThenReuse() async throws {
        let loop = try UDPReceiveLoop(name: "udp-loop-reuse")
        defer { loop.stop() }
        let received = Received()
        let first = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        loop.add(first, maximumLength: 64) { bytes, _ in received.add(1, bytes) }
        loop.remove(first)
        first.close()
        // The system reuses the lowest free number: most likely the one `first` had.
        let second = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        defer { second.close() }
        loop.add(second, maximumLength: 64) { bytes, _ in received.add(2, bytes) }
        let client = try UDPSocket(connectingTo: "127.0.0.1", port: second.localAddress.port)
        defer { client.close() }
        try client.send([7])
        #expect(try await Self.eventually { received.of(2) == [[7]] })
        #expect(received.of(1).isEmpty)
    }

    /// A socket removed after the loop stopped wrote its wake-up byte to the pipe's number after the
    /// thread had closed it, into whatever reused the number (a D-Bus socket, a child's stderr).
    /// The pipe now lives as long as the loop: the byte lands in the loop's own pipe.
    @Test("after the loop's thread ended, a removal's wake-up still goes to the loop's own pipe")
    func wakePipeOutlivesTheThread() async throws {
        let loop = try UDPReceiveLoop(name: "udp-loop-ended")
        let socket = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        defer { socket.close() }
        loop.add(socket, maximumLength: 64) { _, _ in }
        loop.stop()
        #expect(try await Self.eventually { loop.hasEnded })
        var readEnd = stat()
        #expect(fstat(loop.wakeRead, &readEnd) == 0 && (readEnd.st_mode & S_IFMT) == S_IFIFO)
        // The thread drained nothing after it ended: empty the pipe, then the removal writes one byte.
        var byte: UInt8 = 0
        while read(loop.wakeRead, &byte, 1) > 0 {}
        loop.remove(socket)
        byte = 0
        #expect(read(loop.wakeRead, &byte, 1) == 1)
        #expect(byte == 1)
    }

    @Test("a datagram longer than the handler's maximum arrives cut to it, as Zephyr's buffer cuts it")
    func truncation() async throws {
        let loop = try UDPReceiveLoop(name: "udp-loop-cut")
        defer { loop.stop() }
        let received = Received()
        let server = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        defer { server.close() }
        loop.add(server, maximumLength: 4) { bytes, _ in received.add(0, bytes) }
        let client = try UDPSocket(connectingTo: "127.0.0.1", port: server.localAddress.port)
        defer { client.close() }
        try client.send([1, 2, 3, 4, 5, 6])
        #expect(try await Self.eventually { received.of(0) == [[1, 2, 3, 4]] })
    }

    #if os(Linux)
        /// Idle means asleep: while no datagram comes, the loop's thread is not woken at all (a
        /// thread per socket polling in 50 ms slices woke 20 times a second each). Counted by the
        /// kernel's context switches of that thread, not by time.
        @Test("an idle loop's thread sleeps: no wake-up while nothing arrives")
        func idleMeansAsleep() async throws {
            let loop = try UDPReceiveLoop(name: "udp-loop-idle")
            defer { loop.stop() }
            let received = Received()
            let servers = try (0..<20).map { _ in try UDPSocket(bindingTo: "127.0.0.1", port: 0) }
            defer { for server in servers { server.close() } }
            for server in servers {
                loop.add(server, maximumLength: 64) { bytes, _ in
                    // The handler runs on the loop's thread: its /proc entry is this thread's.
                    let task = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
                    received.add(0, bytes)
                    received.add(1, Array(task.split(separator: "/").last.map(String.init)?.utf8 ?? "".utf8))
                }
            }
            // Once it answered a datagram sent after every addition, and sleeps again, count.
            let client = try UDPSocket(connectingTo: "127.0.0.1", port: servers[19].localAddress.port)
            defer { client.close() }
            try client.send([1])
            #expect(try await Self.eventually { received.of(0) == [[1]] })
            let task = try #require(received.of(1).first.map { String(decoding: $0, as: UTF8.self) })
            #expect(try await Self.eventually { Self.state(task) == "S" }, "the loop's thread never slept")
            let before = try #require(Self.switches(task))
            try await Task.sleep(for: .milliseconds(500))
            let after = try #require(Self.switches(task))
            #expect(after == before, "woken \(after - before) times with nothing to receive")
        }

        /// The thread's scheduling state (`R` running, `S` asleep, …).
        static func state(_ task: String) -> String? {
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else {
                return nil
            }
            let line = status.split(separator: "\n").first { $0.hasPrefix("State:") }
            return line?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces).first.map(String.init)
        }

        /// The thread's voluntary context switches: one per sleep it woke from.
        static func switches(_ task: String) -> Int? {
            guard let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8) else {
                return nil
            }
            let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
            return line.flatMap { Int($0.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "") }
        }
    #endif
}
