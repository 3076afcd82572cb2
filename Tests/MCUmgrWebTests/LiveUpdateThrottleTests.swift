import Testing

@testable import MCUmgrWeb

/// Progress reaches the tabs at most four times a second, and the last change is never lost.
@Suite struct LiveUpdateThrottleTests {
    @Test func progressIsSentAtMostOncePerIntervalAndTheLastIsScheduled() {
        var throttle = LiveUpdateThrottle(interval: .milliseconds(250))
        let start = ContinuousClock.now
        #expect(throttle.progress(at: start) == .sendNow)
        throttle.sent(at: start)
        // A burst within the interval: one send scheduled at its end, the rest ride along.
        #expect(throttle.progress(at: start + .milliseconds(10)) == .sendAt(start + .milliseconds(250)))
        for step in 2...20 {
            #expect(throttle.progress(at: start + .milliseconds(10 * step)) == .alreadyScheduled)
        }
        throttle.sent(at: start + .milliseconds(250))
        #expect(throttle.progress(at: start + .milliseconds(300)) == .sendAt(start + .milliseconds(500)))
        // The scheduled send is late: a change after its time rides along rather than going
        // now as well.
        #expect(throttle.progress(at: start + .milliseconds(900)) == .alreadyScheduled)
        // After a quiet interval, at once.
        throttle.sent(at: start + .milliseconds(500))
        #expect(throttle.progress(at: start + .seconds(1)) == .sendNow)
    }
}
