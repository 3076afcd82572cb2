#if os(Linux)
    import Glibc
    import SMPLink
    import Testing

    @testable import SMPBLETransport

    /// The loop that waits for room in an acquired write socket, over a socket pair of the kind
    /// BlueZ hands out (`SOCK_SEQPACKET`): filled until a write is refused, as a busy controller
    /// refuses one.
    @Suite("BlueZWriteRoom")
    struct BlueZWriteRoomTests {
        /// Our end (the socket writes go to) and the peer's end (drained by the test).
        static func pair() throws -> (ours: BlueZSocket, theirs: Int32) {
            var ends: [Int32] = [-1, -1]
            try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &ends) == 0)
            return (BlueZSocket(ends[0]), ends[1])
        }

        /// Writes until the socket refuses one.
        static func fill(_ socket: BlueZSocket) -> Int {
            var written = 0
            while socket.write([UInt8](repeating: 0xA5, count: 244)) == .written { written += 1 }
            return written
        }

        @Test("every waiter of a full socket is woken once the peer reads; one loop serves them all")
        func manyWaitersWokenByRoom() async throws {
            let (socket, theirs) = try Self.pair()
            defer {
                socket.close()
                close(theirs)
            }
            let room = BlueZWriteRoom(socket)
            let written = Self.fill(socket)
            #expect(written > 0)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { try await room.wait() } }
                // The peer drains what was written: room again.
                var buffer = [UInt8](repeating: 0, count: 512)
                for _ in 0..<written { _ = recv(theirs, &buffer, buffer.count, 0) }
                try await group.waitForAll()
            }
            #expect(socket.write([1]) == .written)
        }

        @Test("a close fails the waiters, and a wait after it fails at once")
        func closeFailsWaiters() async throws {
            let (socket, theirs) = try Self.pair()
            defer { close(theirs) }
            let room = BlueZWriteRoom(socket)
            _ = Self.fill(socket)
            let waiter = Task { try await room.wait() }
            socket.close()
            room.socketClosed()
            await #expect(throws: SMPTransportError(.disconnected)) { try await waiter.value }
            await #expect(throws: SMPTransportError(.disconnected)) { try await room.wait() }
        }
    }
#endif
