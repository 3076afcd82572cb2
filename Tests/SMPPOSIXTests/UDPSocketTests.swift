import Foundation
import SMPPOSIX
import SMPTestSupport
import Testing

@Suite("UDPSocket")
struct UDPSocketTests {
    /// Waits for a datagram without blocking a cooperative thread for long.
    static func receive(_ socket: UDPSocket, timeout: Duration) async throws -> (bytes: [UInt8], sender: SocketAddress)?
    {
        try await RealIO.poll(timeout: timeout) { try socket.receive(timeout: .milliseconds(1)) }
    }

    @Test("bind port 0, connect, send both ways, read the sender back", arguments: ["127.0.0.1", "::1", "localhost"])
    func roundTrip(host: String) async throws {
        let server: UDPSocket
        do {
            server = try UDPSocket(bindingTo: host, port: 0)
        } catch {
            // IPv6 may be disabled on a runner; IPv4 must work.
            try #require(host != "127.0.0.1", "bind failed: \(error)")
            return
        }
        defer { server.close() }
        #expect(server.localAddress.port != 0)
        let client = try UDPSocket(connectingTo: server.localAddress.host, port: server.localAddress.port)
        defer { client.close() }
        #expect(client.remoteAddress?.port == server.localAddress.port)
        try client.send([1, 2, 3])
        let (bytes, sender) = try #require(try await Self.receive(server, timeout: .seconds(30)))
        #expect(bytes == [1, 2, 3])
        #expect(sender.port == client.localAddress.port)
        try server.send([4, 5], to: sender)
        #expect(try await Self.receive(client, timeout: .seconds(30))?.bytes == [4, 5])
    }

    /// The wait blocks on its own thread, not on the (small) cooperative pool, for an hour: only
    /// the close can end it within the test's time limit — an event, not a measured time.
    @Test(
        "receive times out with nil, and returns nil after close from another thread",
        .timeLimit(.minutes(10))
    )
    func timeoutAndClose() async throws {
        let socket = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        #expect(try socket.receive(timeout: .milliseconds(20)) == nil)
        let waiter = OnThread { try socket.receive(timeout: .seconds(3600)) == nil }
        try await Task.sleep(for: .milliseconds(50))
        socket.close()
        #expect(try await waiter.value == true)
        #expect(socket.isClosed)
        #expect(throws: SystemCallError.self) { try socket.send([1], to: socket.localAddress) }
        socket.close()
    }

    @Test(
        "receive into a kept buffer: the datagram's length, only its bytes written, longer ones truncated, nil after close"
    )
    func receiveIntoAKeptBuffer() async throws {
        let server = try UDPSocket(bindingTo: "127.0.0.1", port: 0)
        defer { server.close() }
        let client = try UDPSocket(connectingTo: "127.0.0.1", port: server.localAddress.port)
        defer { client.close() }
        var buffer = [UInt8](repeating: 0xEE, count: 4)
        try client.send([1, 2, 3])
        let sender = try #require(try await Self.receive(server, timeout: .seconds(30))).sender
        // (reply, length returned, the whole buffer after it): a shorter reply writes only its
        // own bytes; a longer one is cut at the buffer's size.
        let table: [([UInt8], Int, [UInt8])] = [
            ([4, 5, 6], 3, [4, 5, 6, 0xEE]),
            ([7], 1, [7, 5, 6, 0xEE]),
            ([8, 9, 10, 11, 12, 13], 4, [8, 9, 10, 11]),
        ]
        for (reply, length, after) in table {
            try server.send(reply, to: sender)
            let count = try await RealIO.poll(timeout: .seconds(30)) {
                try client.receive(into: &buffer, timeout: .milliseconds(1))
            }
            #expect(count == length)
            #expect(buffer == after)
        }
        #expect(try client.receive(into: &buffer, timeout: .milliseconds(20)) == nil)
        client.close()
        #expect(try client.receive(into: &buffer, timeout: .milliseconds(20)) == nil)
    }

    @Test("addresses print as host:port, IPv6 in brackets; bad names fail with getaddrinfo's reason")
    func addresses() throws {
        let v4 = try #require(try SocketAddress.resolve(host: "127.0.0.1", port: 1337).first)
        #expect(v4.description == "127.0.0.1:1337")
        #expect(!v4.isIPv6)
        let v6 = try #require(try SocketAddress.resolve(host: "[::1]", port: 1337).first)
        #expect(v6.description == "[::1]:1337")
        #expect(v6.isIPv6)
        #expect(throws: SystemCallError.self) { try SocketAddress.resolve(host: "no-such-host.invalid", port: 1) }
        #expect(throws: SystemCallError.self) { try UDPSocket(bindingTo: "192.0.2.77", port: 0) }
    }

    @Test("errors name the call, the subject and the reason")
    func errorDescription() {
        let error = SystemCallError("bind", "127.0.0.1:1337", code: 98, reason: "Address already in use")
        #expect(error.description == "bind 127.0.0.1:1337: Address already in use")
        #expect(!SystemCallError("open", "/x", code: 2).reason.isEmpty)
    }
}

/// Runs a blocking call on a dedicated thread and awaits its result.
final class OnThread<T: Sendable>: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var result: Result<T, any Error>?
    private var finished: ContinuousClock.Instant?
    private var waiters: [CheckedContinuation<T, any Error>] = []

    init(_ body: @escaping @Sendable () throws -> T) {
        let thread = Thread { [self] in
            let outcome = Result { try body() }
            let waiting: [CheckedContinuation<T, any Error>] = lock.withLock {
                result = outcome
                finished = ContinuousClock.now
                defer { waiters = [] }
                return waiters
            }
            for waiter in waiting { waiter.resume(with: outcome) }
        }
        thread.start()
    }

    /// When the body returned.
    var finishedAt: ContinuousClock.Instant? {
        lock.lock()
        defer { lock.unlock() }
        return finished
    }

    /// The body's result, once it returned.
    var value: T {
        get async throws {
            try await withCheckedThrowingContinuation { (waiter: CheckedContinuation<T, any Error>) in
                let done: Result<T, any Error>? = lock.withLock {
                    if let result { return result }
                    waiters.append(waiter)
                    return nil
                }
                if let done { waiter.resume(with: done) }
            }
        }
    }
}
