import Testing

@testable import MCUmgr

struct AdaptiveWindowTests {
    @Test func startsAtTheGivenSizeWithinTheCeiling() {
        #expect(AdaptiveWindow(initial: 3, ceiling: 3).size == 3)
        #expect(AdaptiveWindow(initial: 8, ceiling: 3).size == 3)
        #expect(AdaptiveWindow(initial: 0, ceiling: 3).size == 1)
        #expect(AdaptiveWindow(initial: 2, ceiling: 0).size == 1)
    }

    /// A window forced to 8 on a device with four buffers: ENOMEM at 8 and at 4 halves it to 2;
    /// answers grow it to 3, one below the size that ran the device out of buffers, and never to
    /// 4 again however long answers flow.
    @Test func outOfBuffersHalvesAndNeverReturnsToTheExhaustedSize() {
        var window = AdaptiveWindow(initial: 8, ceiling: 8)
        #expect(window.backPressure(.outOfBuffers) == 4)
        #expect(window.backPressure(.outOfBuffers) == 2)
        #expect(window.answered() == nil)
        #expect(window.answered() == 3)
        for _ in 0..<1000 { #expect(window.answered() == nil) }
        #expect(window.size == 3)
    }

    /// Busy answers and silence pass: after a long run of answers the window probes the size that
    /// met them again, then grows to the ceiling.
    @Test(arguments: [AdaptiveWindow.Pressure.busy, .noAnswer])
    func passingPressureIsProbedAgainAfterAStreak(_ pressure: AdaptiveWindow.Pressure) {
        var window = AdaptiveWindow(initial: 4, ceiling: 4)
        #expect(window.backPressure(pressure) == 2)
        var sizes: [Int] = []
        for _ in 0..<(AdaptiveWindow.probeAfter + 20) {
            if let grown = window.answered() { sizes.append(grown) }
        }
        #expect(sizes == [3, 4])
        #expect(window.size == 4)
        // Before the streak it stayed below the troubled size.
        var early = AdaptiveWindow(initial: 4, ceiling: 4)
        _ = early.backPressure(pressure)
        for _ in 0..<(AdaptiveWindow.probeAfter - 1) { _ = early.answered() }
        #expect(early.size == 3)
    }

    @Test func neverBelowOne() {
        var window = AdaptiveWindow(initial: 1, ceiling: 1)
        #expect(window.backPressure(.noAnswer) == nil)
        #expect(window.backPressure(.outOfBuffers) == nil)
        #expect(window.size == 1)
        #expect(window.answered() == nil)
    }

    /// Growth is one step per window's worth of answers.
    @Test func growsOneStepPerWindowOfAnswers() {
        var window = AdaptiveWindow(initial: 8, ceiling: 8)
        _ = window.backPressure(.busy)
        _ = window.backPressure(.busy)
        #expect(window.size == 2)
        var answers = 0
        while window.size < 3 {
            _ = window.answered()
            answers += 1
        }
        #expect(answers == 2)
    }
}
