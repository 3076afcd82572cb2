import SMPBytes
import Testing

struct LockedTests {
    @Test func returnsWhatTheBodyReturnsAndKeepsWhatItChanged() {
        let locked = Locked([1, 2])
        let count = locked.withLock { values in
            values.append(3)
            return values.count
        }
        #expect(count == 3)
        #expect(locked.withLock { $0 } == [1, 2, 3])
    }

    /// Many tasks on many threads adding at once: with the lock no increment is lost.
    @Test func noIncrementIsLostUnderContention() async {
        let counter = Locked(0)
        let tasks = 64
        let increments = 2_000
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    for _ in 0..<increments { counter.withLock { $0 += 1 } }
                }
            }
        }
        #expect(counter.withLock { $0 } == tasks * increments)
    }

    /// Read, decide and write in one critical section: exactly one of many claimants wins.
    @Test func aCheckAndSetHasOneWinner() async {
        let owner = Locked<Int?>(nil)
        let winners = await withTaskGroup(of: Bool.self) { group in
            for claimant in 0..<100 {
                group.addTask {
                    owner.withLock { current in
                        guard current == nil else { return false }
                        current = claimant
                        return true
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(winners == 1)
        #expect(owner.withLock { $0 } != nil)
    }

    struct Refusal: Error, Equatable {}

    /// A throwing body releases the lock (the next call gets it) and its change stays.
    @Test func aThrowingBodyReleasesTheLock() {
        let locked = Locked(0)
        #expect(throws: Refusal()) {
            try locked.withLock { (value: inout Int) throws(Refusal) in
                value = 7
                throw Refusal()
            }
        }
        #expect(locked.withLock { $0 } == 7)
    }
}
