import MCUmgr
import SMPCore
import SMPLink
import Testing

@testable import SMPSimulator

@Suite("QuietClock")
struct QuietClockTests {
    @Test("the clock stands still while work is in hand and runs once the device is quiet")
    func standsStillWhileHeld() async throws {
        let clock = QuietClock()
        clock.hold()
        let held = clock.now
        try await Task.sleep(for: .milliseconds(30))
        #expect(clock.now == held)
        clock.release()
        try await clock.sleep(for: .milliseconds(10))
        #expect(clock.now >= held.advanced(by: .milliseconds(10)))
    }

    @Test("a sleeper wakes only after its time has passed quietly")
    func aSleeperWaitsForQuietTime() async throws {
        let clock = QuietClock()
        clock.hold()
        let start = clock.now
        let sleeper = Task { try await clock.sleep(for: .milliseconds(20)) }
        // Ten times the sleep in real time: the clock has not moved, so the sleeper still sleeps.
        try await Task.sleep(for: .milliseconds(200))
        #expect(clock.now == start)
        clock.release()
        try await sleeper.value
        #expect(clock.now >= start.advanced(by: .milliseconds(20)))
    }

    @Test("a release without a hold changes nothing")
    func anUnmatchedReleaseIsIgnored() async throws {
        let clock = QuietClock()
        clock.release()
        clock.hold()
        let held = clock.now
        try await Task.sleep(for: .milliseconds(20))
        #expect(clock.now == held, "one hold after a stray release still stops the clock")
        clock.release()
    }

    @Test("a hold longer than the limit lets the clock run")
    func theHoldLimitEndsAWedge() async throws {
        let clock = QuietClock(holdLimit: .milliseconds(50))
        clock.hold()
        try await clock.sleep(for: .milliseconds(30))
        #expect(clock.now.offset >= .milliseconds(30))
    }

    @Test("an answer the client has not read yet holds the clock, and the end of the connection releases it")
    func unreadAnswersHold() async throws {
        let (device, clock) = Self.quietDevice()
        let connection = try await LoopbackTransport(device: device).connect()
        try await connection.send(SMPFrame.request(OSManagement.Echo(text: "a"), sequence: 0).bytes)
        // From the send on the device holds the request, then the link its answer.
        let sent = clock.now
        try await Task.sleep(for: .milliseconds(100))
        #expect(clock.now == sent)
        var frames = connection.frames.makeAsyncIterator()
        let answer = try await frames.next()
        #expect(answer?[6] == 0)
        #expect(clock.now == sent, "read, not yet handled: held until the reader asks for the next")
        await connection.close()
        try await clock.sleep(for: .milliseconds(5))
        #expect(clock.now >= sent.advanced(by: .milliseconds(5)))
    }

    /// A device that tells a new quiet clock when it works, and the clock.
    static func quietDevice(_ configuration: SimulatedDevice.Configuration = .init()) -> (SimulatedDevice, QuietClock) {
        let clock = QuietClock()
        var configuration = configuration
        configuration.quietClock = clock
        return (SimulatedDevice(configuration: configuration), clock)
    }

    /// A client of `device` whose one attempt times out after 50 ms on `clock`.
    static func client(_ device: SimulatedDevice, clock: SMPClock) async throws -> SMPClient {
        let connection = try await LoopbackTransport(device: device).connect()
        let client = SMPClient(
            connection: connection,
            configuration: .init(
                timeout: .milliseconds(50),
                retries: 0,
                readsParameters: false,
                firstSequence: 0,
                clock: clock
            )
        )
        await client.start()
        return client
    }

    @Test("an answer the link delays past the timeout is no lost answer on the quiet clock; on the real clock it is")
    func aLateAnswerIsNotLost() async throws {
        let (device, quiet) = Self.quietDevice(.init(linkLatency: .milliseconds(400)))
        let patient = try await Self.client(device, clock: SMPClock(quiet))
        #expect(try await patient.send(OSManagement.Echo(text: "late")).text == "late")
        await patient.close()
        // The same device and timeout on the real clock: 400 ms is past 50 ms on any machine.
        let hasty = try await Self.client(device, clock: .continuous)
        await #expect(throws: SMPTransportError(.timeout)) {
            try await hasty.send(OSManagement.Echo(text: "late"))
        }
        await hasty.close()
    }

    @Test("an answer a fault loses still times out on the quiet clock")
    func aLostAnswerTimesOut() async throws {
        let (device, quiet) = Self.quietDevice()
        await device.setFaults(Faults([.loseAnswer(toRequest: 1)]))
        let client = try await Self.client(device, clock: SMPClock(quiet))
        await #expect(throws: SMPTransportError(.timeout)) {
            try await client.send(OSManagement.Echo(text: "lost"))
        }
        await client.close()
    }
}
