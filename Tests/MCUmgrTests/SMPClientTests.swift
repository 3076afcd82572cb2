import Foundation
import MCUmgr
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct SMPClientTests {
    /// A started client. Its default timeout is one a loaded machine cannot reach: the tests that
    /// use it are answered at once, and a stall past a short timeout would send a request again
    /// (`rc13FallsBackToV1AndResends` counts what was sent). Tests of timeouts give theirs.
    func client(_ connection: ScriptedConnection, timeout: Duration = .seconds(30), retries: Int = 2) async
        -> SMPClient
    {
        let client = SMPClient(
            connection: connection,
            configuration: .init(timeout: timeout, retries: retries, busyBackoff: .milliseconds(1), firstSequence: 0)
        )
        await client.start()
        return client
    }

    /// A started client whose timeouts run on `clock`, a step the test takes.
    func client(_ connection: ScriptedConnection, timeout: Duration, retries: Int, clock: ManualClock) async
        -> SMPClient
    {
        let client = SMPClient(
            connection: connection,
            configuration: .init(timeout: timeout, retries: retries, firstSequence: 0, clock: SMPClock(clock))
        )
        await client.start()
        return client
    }

    @Test func echoRoundTrips() async throws {
        let connection = ScriptedConnection { request in
            [ScriptedConnection.reply(request, ["r": .textString("hello")])]
        }
        let client = await client(connection)
        let response = try await client.send(OSManagement.Echo(text: "hello"))
        #expect(response.text == "hello")
        #expect(connection.sent.first?.header.version == .v2)
    }

    /// After the link dropped, a request is refused before it is handed over: the error says
    /// nothing was sent, so a reset refused so is not an unknown outcome.
    @Test func aRequestAfterTheLinkDroppedSaysNothingWasSent() async throws {
        let connection = ScriptedConnection { request in [ScriptedConnection.reply(request, [:])] }
        let client = await client(connection)
        connection.drop()
        // The drop reaches the client through its frame stream: a request sent before it notices
        // fails with the drop (sent, its answer lost with the link).
        while (try? await client.send(OSManagement.Echo(text: "x"))) != nil {}
        let refused = await #expect(throws: SMPTransportError.self) { _ = try await client.send(OSManagement.Reset()) }
        #expect(refused?.code == .disconnected)
        #expect(refused?.nothingSent == true)
        #expect(!connection.sent.contains { $0.header.group == .os && $0.header.command == 5 })
    }

    @Test func concurrentRequestsAreMatchedBySequenceWhateverTheOrder() async throws {
        let held = LockedFrames()
        let connection = ScriptedConnection { request in
            // Hold every request; answer all of them, newest first, when the third arrives.
            held.append(request)
            guard held.count == 3 else { return [] }
            return held.all.reversed().map {
                ScriptedConnection.reply($0, ["r": .textString("seq \($0.header.sequence)")])
            }
        }
        let client = await client(connection, timeout: .seconds(5))
        async let a = client.send(OSManagement.Echo(text: "a"))
        async let b = client.send(OSManagement.Echo(text: "b"))
        async let c = client.send(OSManagement.Echo(text: "c"))
        let answers = try await [a.text, b.text, c.text]
        #expect(Set(answers) == ["seq 0", "seq 1", "seq 2"])
    }

    @Test func aTimedOutRequestIsRetriedAndTheLateDuplicateIsDropped() async throws {
        let attempts = Counter()
        let connection = ScriptedConnection { request in
            // The first attempt is lost; the second is answered twice (a duplicate).
            let echoed = (try? request.payloadValue())?["d"] ?? "?"
            return attempts.increment() == 1
                ? [] : Array(repeating: ScriptedConnection.reply(request, ["r": echoed]), count: 2)
        }
        // On a test clock: the first attempt times out when the test says so, and nothing else
        // can (on the real clock a stalled machine timed the second attempt out too).
        let clock = ManualClock()
        let client = await client(connection, timeout: .milliseconds(100), retries: 2, clock: clock)
        let first = Task { try await client.send(OSManagement.Echo(text: "x")) }
        await connection.waitUntilSent { $0.count == 1 }
        try await Self.untilSleeping(clock)
        clock.advance(by: .milliseconds(100))
        #expect(try await first.value.text == "x")
        // The next request must get its own answer, not the stale duplicate.
        #expect(try await client.send(OSManagement.Echo(text: "y")).text == "y")
        #expect(connection.sent.map(\.header.sequence) == [0, 1, 2])
        await client.close()
    }

    @Test func noAnswerAtAllIsATimeoutAfterEveryRetry() async throws {
        let connection = ScriptedConnection { _ in [] }
        let client = await client(connection, timeout: .milliseconds(30), retries: 2)
        await #expect(throws: SMPTransportError(.timeout)) { try await client.send(OSManagement.Echo(text: "x")) }
        #expect(connection.sent.count == 3)
    }

    @Test func aStaleAnswerForAnotherCommandIsIgnored() async throws {
        let connection = ScriptedConnection { request in
            var foreign = request.header
            foreign.group = .image
            return [
                (try? SMPFrame.response(payload: ["r": "wrong"], to: foreign).bytes) ?? [],
                ScriptedConnection.reply(request, ["r": "right"]),
            ]
        }
        let client = await client(connection)
        #expect(try await client.send(OSManagement.Echo(text: "x")).text == "right")
    }

    @Test func rc13FallsBackToV1AndResends() async throws {
        let connection = ScriptedConnection { request in
            request.header.version == .v2
                ? [ScriptedConnection.reply(request, ["rc": 13], version: .v1)]
                : [ScriptedConnection.reply(request, ["r": "v1"])]
        }
        let client = await client(connection)
        #expect(try await client.send(OSManagement.Echo(text: "x")).text == "v1")
        #expect(await client.version == .v1)
        #expect(connection.sent.map(\.header.version) == [.v2, .v1])
    }

    @Test func busyAnswersAreRetried() async throws {
        let attempts = Counter()
        let connection = ScriptedConnection { request in
            [ScriptedConnection.reply(request, attempts.increment() <= 3 ? ["rc": 10] : ["r": "done"])]
        }
        let client = await client(connection)
        #expect(try await client.send(OSManagement.Echo(text: "x")).text == "done")
    }

    @Test func deviceRefusalsNameTheirCode() async throws {
        let connection = ScriptedConnection { request in
            [ScriptedConnection.reply(request, ["err": ["group": 1, "rc": 9]])]
        }
        let client = await client(connection)
        do {
            _ = try await client.send(ImageManagement.Erase(slot: 1))
            Issue.record("a refusal read as success")
        } catch let error as SMPDeviceError {
            #expect(error.description == "image error 9 NO_FREE_SLOT")
        }
    }

    /// Timeouts run on the configured clock: with a manual clock each timeout is a step the test
    /// takes — the request is sent again when the clock passes the timeout, and fails when it
    /// passes the last attempt's — with no waiting at all.
    @Test(.timeLimit(.minutes(10)))
    func aTimeoutIsAStepOfTheClock() async throws {
        let connection = ScriptedConnection { _ in [] }
        let clock = ManualClock()
        let client = await client(connection, timeout: .seconds(3), retries: 1, clock: clock)
        let pending = Task { try await client.send(OSManagement.Echo(text: "x")) }
        await connection.waitUntilSent { $0.count == 1 }
        try await Self.untilSleeping(clock)
        clock.advance(by: .seconds(2))
        #expect(connection.sent.count == 1, "sent again before its timeout")
        clock.advance(by: .seconds(1))
        await connection.waitUntilSent { $0.count == 2 }
        try await Self.untilSleeping(clock)
        clock.advance(by: .seconds(3))
        await #expect(throws: SMPTransportError(.timeout)) { try await pending.value }
        #expect(connection.sent.count == 2)
        await client.close()
    }

    /// Yields until a task sleeps on the clock (the client arms its timeout just after sending).
    static func untilSleeping(_ clock: ManualClock) async throws {
        for _ in 0..<100_000 where clock.sleeperCount == 0 { await Task.yield() }
        try #require(clock.sleeperCount > 0, "nothing waits on the clock")
    }

    @Test(.timeLimit(.minutes(10)))
    func aDroppedLinkFailsWhatIsPending() async throws {
        let connection = ScriptedConnection { _ in [] }
        let client = await client(connection, timeout: .seconds(10))
        let pending = Task { try await client.send(OSManagement.Echo(text: "x")) }
        await connection.waitUntilSent { $0.count == 1 }
        connection.drop()
        await #expect(throws: SMPTransportError(.disconnected)) { try await pending.value }
        await #expect(throws: SMPTransportError(.disconnected)) { try await client.send(OSManagement.Echo(text: "y")) }
    }

    @Test(.timeLimit(.minutes(10)))
    func cancellationFreesTheRequest() async throws {
        let connection = ScriptedConnection { _ in [] }
        let client = await client(connection, timeout: .seconds(10))
        let task = Task { try await client.send(OSManagement.Echo(text: "x")) }
        await connection.waitUntilSent { $0.count == 1 }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func parametersClampTheFrameSize() async throws {
        let connection = ScriptedConnection(maximumFrameSize: 1472) { request in
            [ScriptedConnection.reply(request, ["buf_size": 384, "buf_count": 4])]
        }
        let client = await client(connection)
        try await client.loadParameters()
        #expect(await client.maximumFrameSize == 384)
        #expect(await client.deviceParameters?.bufferCount == 4)
        let huge = OSManagement.Echo(text: String(repeating: "x", count: 400))
        await #expect(throws: SMPTransportError(.frameTooLarge)) { try await client.send(huge) }
    }

    @Test func malformedFramesFromTheDeviceAreDropped() async throws {
        let connection = ScriptedConnection { request in
            [
                [0x0b, 0x00], [0x0b, 0x00, 0x00, 0x05, 0x00, 0x00, request.header.sequence, 0x00, 0xa1],
                ScriptedConnection.reply(request, ["r": "ok"]),
            ]
        }
        let client = await client(connection)
        #expect(try await client.send(OSManagement.Echo(text: "x")).text == "ok")
    }
}

final class Counter: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var value = 0
    func increment() -> Int {
        lock.lock()
        defer { lock.unlock() }
        value += 1
        return value
    }
}

final class LockedFrames: @unchecked Sendable {
    // Guarded by `lock`.
    private let lock = NSLock()
    private var frames: [SMPFrame] = []
    func append(_ frame: SMPFrame) {
        lock.lock()
        frames.append(frame)
        lock.unlock()
    }
    var count: Int {
        lock.lock()
        defer { lock.unlock() }
        return frames.count
    }
    var all: [SMPFrame] {
        lock.lock()
        defer { lock.unlock() }
        return frames
    }
}
