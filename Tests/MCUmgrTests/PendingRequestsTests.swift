import SMPCore
import Testing

@testable import MCUmgr

struct PendingRequestsTests {
    typealias Table = PendingRequests<String>
    let echo = Table.Expectation(group: .os, command: 0, operation: .writeResponse)

    func header(_ sequence: UInt8, group: SMPGroup = .os, command: UInt8 = 0, operation: SMPOperation = .writeResponse)
        -> SMPHeader
    {
        SMPHeader(operation: operation, length: 0, group: group, sequence: sequence, command: command)
    }

    @Test func sequencesIncreaseAndWrap() {
        var table = Table(firstSequence: 254)
        let request = table.add("a")
        #expect(table.attempt(request, expecting: echo) == 254)
        #expect(table.attempt(request, expecting: echo) == 255)
        #expect(table.attempt(request, expecting: echo) == 0)
    }

    @Test func anAnswerToAnyAttemptCompletesTheRequestAndRetiresAllAttempts() {
        var table = Table(firstSequence: 10)
        let request = table.add("waiter")
        _ = table.attempt(request, expecting: echo)
        _ = table.attempt(request, expecting: echo)
        guard case .answered(let id, let waiter) = table.match(header(10)) else {
            Issue.record("the first attempt's answer was not matched")
            return
        }
        #expect(id == request && waiter == "waiter")
        // The retry's answer arrives later: nobody waits for it any more.
        guard case .unknownSequence = table.match(header(11)) else {
            Issue.record("a late duplicate was matched")
            return
        }
        #expect(table.count == 0)
    }

    @Test func aMatchingSequenceForAnotherCommandIsNotAnAnswer() {
        var table = Table(firstSequence: 3)
        let request = table.add("w")
        _ = table.attempt(request, expecting: echo)
        guard case .mismatched = table.match(header(3, group: .image, command: 1)) else {
            Issue.record("a foreign frame was matched")
            return
        }
        guard case .mismatched = table.match(header(3, operation: .readResponse)) else {
            Issue.record("a wrong operation was matched")
            return
        }
        #expect(table.count == 1)
    }

    @Test func sequencesInFlightAreSkipped() {
        var table = Table(firstSequence: 0)
        let first = table.add("a")
        for _ in 0..<3 { _ = table.attempt(first, expecting: echo) }
        let second = table.add("b")
        table.remove(second)
        var wrapped = Table(firstSequence: 255)
        let long = wrapped.add("long")
        _ = wrapped.attempt(long, expecting: echo)  // 255 stays in flight
        let other = wrapped.add("other")
        for _ in 0..<255 { _ = wrapped.attempt(other, expecting: echo) }
        // All 256 numbers are in flight now: no more attempts can be made.
        #expect(wrapped.attempt(other, expecting: echo) == nil)
    }

    @Test func removeAllReturnsEveryWaiter() {
        var table = Table(firstSequence: 0)
        _ = table.add("a")
        _ = table.add("b")
        #expect(Set(table.removeAll()) == ["a", "b"])
        #expect(table.count == 0)
    }
}
