import Foundation
import SMPBytes
import Testing

@testable import MCUmgr

/// The driver's inbox: order, finishing, a waiting reader, cancellation. Bounded by events (an
/// element handed over, a task cancelled), never by elapsed time.
@Suite struct TransferInboxTests {
    @Test(
        "elements come out in the order they went in; after finish the rest is read, then nil, and later yields are dropped"
    )
    func orderThenFinish() async {
        let inbox = TransferInbox<Int>()
        for value in 1...5 { inbox.yield(value) }
        #expect(await inbox.next() == 1)
        #expect(await inbox.next() == 2)
        inbox.yield(6)
        inbox.finish()
        inbox.yield(7)
        var rest: [Int] = []
        while let value = await inbox.next() { rest.append(value) }
        #expect(rest == [3, 4, 5, 6])
        #expect(await inbox.next() == nil)
    }

    @Test("a waiting reader gets the next element, and nil when the inbox finishes")
    func waitingReader() async {
        let inbox = TransferInbox<Int>()
        let reader = Task { (await inbox.next(), await inbox.next()) }
        // Whether the reader waits already or not, it gets the element, then nil.
        inbox.yield(42)
        inbox.finish()
        let (first, second) = await reader.value
        #expect(first == 42)
        #expect(second == nil)
    }

    @Test(
        "cancelling the reading task ends its wait with nil, and every later one; a task cancelled before it reads gets nil at once"
    )
    func cancellation() async throws {
        let inbox = TransferInbox<Int>()
        let waiting = Task { try await inbox.reading { (await inbox.next(), await inbox.next()) } }
        // Cancelled while it waits (not before it reads): bounded by turns, not by time.
        for _ in 0..<100_000 where !inbox.hasWaitingReader { await Task.yield() }
        try #require(inbox.hasWaitingReader)
        waiting.cancel()
        let (first, second) = try await waiting.value
        #expect(first == nil)
        #expect(second == nil)

        let other = TransferInbox<Int>()
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await other.next()
        }
        #expect(await cancelledFirst.value == nil)
        // Without a reader cancelled inside it, the inbox goes on.
        other.yield(1)
        #expect(await other.next() == 1)
    }

    @Test("the finish action runs once, when the inbox finishes, or at once on a finished inbox")
    func finishAction() {
        let inbox = TransferInbox<Int>()
        let runs = Counter()
        inbox.onFinish { runs.increment() }
        #expect(runs.value == 0)
        inbox.finish()
        inbox.finish()
        #expect(runs.value == 1)
        inbox.onFinish { runs.increment() }
        #expect(runs.value == 2)
    }

    private final class Counter: Sendable {
        private let count = Locked(0)
        var value: Int { count.withLock { $0 } }
        func increment() { count.withLock { $0 += 1 } }
    }
}
