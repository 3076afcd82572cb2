import Testing

@testable import SMPBLETransport

/// Writes without response never hang when the ready callback does not come (some macOS
/// versions), as Nordic's library writes anyway after a short wait.
@Suite struct WriteWithoutResponsePacingTests {
    /// With room, every write goes; without room and before any wait, none does.
    @Test func followsTheControllerFlag() {
        var pacing = WriteWithoutResponsePacing()
        let allowed1 = pacing.mayWrite(canSend: true)
        #expect(allowed1)
        let allowed2 = pacing.mayWrite(canSend: true)
        #expect(allowed2)
        let allowed3 = pacing.mayWrite(canSend: false)
        #expect(!allowed3)
        let allowed4 = pacing.mayWrite(canSend: false)
        #expect(!allowed4)
    }

    /// A wait that ends by its timer with the flag still down lets exactly the next write through.
    @Test func timedOutWaitForcesOneWrite() {
        var pacing = WriteWithoutResponsePacing()
        let allowed5 = pacing.mayWrite(canSend: false)
        #expect(!allowed5)
        pacing.waitEnded(byReadySignal: false, canSend: false)
        #expect(pacing.forcesNextWrite)
        let allowed6 = pacing.mayWrite(canSend: false)
        #expect(allowed6)
        #expect(!pacing.forcesNextWrite)
        let allowed7 = pacing.mayWrite(canSend: false)
        #expect(!allowed7)
    }

    /// The ready callback, or room found when the timer fires, forces nothing.
    @Test func readySignalOrRoomForcesNothing() {
        var pacing = WriteWithoutResponsePacing()
        pacing.waitEnded(byReadySignal: true, canSend: false)
        let allowed8 = pacing.mayWrite(canSend: false)
        #expect(!allowed8)
        pacing.waitEnded(byReadySignal: false, canSend: true)
        let allowed9 = pacing.mayWrite(canSend: false)
        #expect(!allowed9)
    }

    /// `reset()` drops a pending force (a new characteristic after a rediscovery).
    @Test func resetDropsTheForce() {
        var pacing = WriteWithoutResponsePacing()
        pacing.waitEnded(byReadySignal: false, canSend: false)
        pacing.reset()
        let allowed10 = pacing.mayWrite(canSend: false)
        #expect(!allowed10)
    }

    /// The transport core's loop (`write`, and `wait` when refused) against a controller whose
    /// flag never rises again and whose callback never comes: every fragment still goes out, after
    /// one timed-out wait each, never more.
    @Test(arguments: [1, 5, 40])
    func silentControllerNeverHangsTheWriter(fragments: Int) {
        var pacing = WriteWithoutResponsePacing()
        var written = 0
        var waits = 0
        for _ in 0..<fragments {
            var refusals = 0
            // Bounded so that a regression fails the test instead of hanging it.
            while !pacing.mayWrite(canSend: false), refusals < 10 {
                refusals += 1
                waits += 1
                pacing.waitEnded(byReadySignal: false, canSend: false)
            }
            if refusals < 10 { written += 1 }
        }
        #expect(written == fragments)
        #expect(waits == fragments)
    }
}
