import SMPLink
import SMPTestSupport
import Testing

@testable import SMPHCIHost

/// The inputs and timer of one state machine, on a clock the test advances.
@Suite(.timeLimit(.minutes(5)))
struct TimedInputsTests {
    /// Advances the clock once the timer's task sleeps on it.
    static func advance(_ clock: ManualClock, by duration: Duration) async throws {
        _ = try await RealIO.poll(timeout: .seconds(60)) { clock.sleeperCount > 0 ? true : nil }
        clock.advance(by: duration)
    }

    @Test func inputsAndTheTimerArriveInOneOrder() async throws {
        let clock = ManualClock()
        let inputs = TimedInputs<Int>(clock: SMPClock(clock))
        var iterator = inputs.inputs.makeAsyncIterator()
        inputs.deliver(.input(1))
        let generation = inputs.arm(after: .seconds(30))
        #expect(inputs.isCurrent(generation))
        guard case .input(1) = await iterator.next() else {
            Issue.record("not the input")
            return
        }
        try await Self.advance(clock, by: .seconds(30))
        guard case .timer(let fired) = await iterator.next() else {
            Issue.record("no timer")
            return
        }
        #expect(fired == generation)
        #expect(inputs.isCurrent(fired))
        inputs.finish()
        let after = await iterator.next()
        #expect(after.map { _ in true } == nil, "the inputs end with finish()")
    }

    @Test func rearmingMakesTheEarlierTimerStale() async throws {
        let clock = ManualClock()
        let inputs = TimedInputs<Int>(clock: SMPClock(clock))
        let first = inputs.arm(after: .seconds(1))
        let second = inputs.arm(after: .seconds(2))
        #expect(!inputs.isCurrent(first))
        #expect(inputs.isCurrent(second))
        inputs.disarm()
        #expect(!inputs.isCurrent(second))
        inputs.finish()
    }

    @Test func anEndArrivesAsAnInput() async throws {
        let inputs = TimedInputs<Int>(clock: .continuous)
        inputs.deliver(.ended(FakeControllerError("gone")))
        var iterator = inputs.inputs.makeAsyncIterator()
        guard case .ended(let error) = await iterator.next() else {
            Issue.record("no end")
            return
        }
        #expect("\(error)" == "gone")
        inputs.finish()
    }
}
