import SMPBytes
import Testing

@testable import SMPPOSIX

@Suite("BlockingReadLoop")
struct BlockingReadLoopTests {
    @Test("the loop runs its iterations in order on one thread until one returns false")
    func runsUntilFalse() async {
        let seen = Locked<[Int]>([])
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            BlockingReadLoop.start(name: "test.loop", state: 0) { count in
                count += 1
                seen.withLock { $0.append(count) }
                guard count < 100 else {
                    done.resume()
                    return false
                }
                return true
            }
        }
        #expect(seen.withLock { $0 } == Array(1...100))
    }

    @Test("a loop without state stops at the first false")
    func oneShot() async {
        let runs = Locked(0)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            BlockingReadLoop.start(name: "test.once") {
                runs.withLock { $0 += 1 }
                done.resume()
                return false
            }
        }
        #expect(runs.withLock { $0 } == 1)
    }
}
