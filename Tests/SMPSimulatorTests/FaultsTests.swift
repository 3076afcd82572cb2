import Testing

@testable import SMPSimulator

@Suite("Faults")
struct FaultsTests {
    static func frames(_ count: Int) -> [[UInt8]] { (0..<count).map { [UInt8($0)] } }

    /// Feeds one response per request through an injector and records what was sent.
    static func run(_ faults: [Fault], requests: Int) -> [[UInt8]] {
        var injector = FaultInjector(Faults(faults, seed: 42))
        var sent: [[UInt8]] = []
        for index in 0..<requests {
            _ = injector.admit()
            sent += injector.deliver([[UInt8(index)]], latency: .zero, wasReset: false).responses.map(\.frame)
        }
        return sent
    }

    @Test(
        "link faults on responses",
        arguments: [
            (Fault.dropResponses(every: 2), [[0], [2], [4]] as [[UInt8]]),
            (.duplicateResponses(every: 3), [[0], [1], [2], [2], [3], [4]]),
            (.reorderResponses(every: 2), [[0], [2], [1], [4], [3]]),
            (.dropResponsesRandomly(probability: 1), []),
            (.dropResponsesRandomly(probability: 0), [[0], [1], [2], [3], [4]]),
            // Once: the answer to the 3rd request (index 2), and no other.
            (.loseAnswer(toRequest: 3), [[0], [1], [3], [4]]),
        ]
    )
    func responses(fault: Fault, expected: [[UInt8]]) {
        #expect(Self.run([fault], requests: 5) == expected)
    }

    @Test("delays add to the link latency of the chosen responses")
    func delays() {
        var injector = FaultInjector(Faults([.delayResponses(by: .milliseconds(50), every: 2)]))
        let first = injector.deliver([[1]], latency: .milliseconds(5), wasReset: false)
        let second = injector.deliver([[2]], latency: .milliseconds(5), wasReset: false)
        #expect(first.responses.map(\.delay) == [.milliseconds(5)])
        #expect(second.responses.map(\.delay) == [.milliseconds(55)])
    }

    @Test("corruption flips exactly one bit, the same one for the same seed")
    func corruption() {
        let original: [UInt8] = Array(repeating: 0, count: 32)
        var a = FaultInjector(Faults([.corruptResponses(every: 1)], seed: 9))
        var b = FaultInjector(Faults([.corruptResponses(every: 1)], seed: 9))
        let x = a.deliver([original], latency: .zero, wasReset: false).responses[0].frame
        let y = b.deliver([original], latency: .zero, wasReset: false).responses[0].frame
        #expect(x == y)
        #expect(x.map { $0.nonzeroBitCount }.reduce(0, +) == 1)
    }

    @Test("request fates: drop every n-th, busy for k, power loss at request n")
    func requestFates() {
        var injector = FaultInjector(Faults([.busy(count: 2), .dropRequests(every: 4), .powerLoss(.atRequest(6))]))
        let fates = (0..<7).map { _ in injector.admit() }
        #expect(fates == [.busy, .busy, .process, .drop, .process, .powerLoss, .process])
    }

    @Test("a link loss at request n closes the link once, after that request's answer")
    func linkLossOnce() {
        var injector = FaultInjector(Faults([.linkLoss(atRequest: 2)]))
        let closes = (1...4).map { index in
            _ = injector.admit()
            return injector.deliver([[UInt8(index)]], latency: .zero, wasReset: false).disconnect
        }
        #expect(closes == [false, true, false, false])
    }

    @Test("disconnect after n requests and on reset")
    func disconnects() {
        var injector = FaultInjector(Faults([.disconnect(afterRequests: 2)]))
        _ = injector.admit()
        #expect(!injector.deliver([[1]], latency: .zero, wasReset: false).disconnect)
        _ = injector.admit()
        #expect(injector.deliver([[2]], latency: .zero, wasReset: false).disconnect)
        var onReset = FaultInjector(Faults([.disconnectOnReset]))
        #expect(!onReset.deliver([[1]], latency: .zero, wasReset: false).disconnect)
        #expect(onReset.deliver([[1]], latency: .zero, wasReset: true).disconnect)
    }

    @Test("power loss during a swap: after the first step, or at a chosen step; consumed once it struck")
    func swapPowerLoss() {
        var injector = FaultInjector(Faults([.powerLoss(.duringSwap)]))
        #expect(injector.powerLossSwapStep == 1)
        // A boot without a swap does not use it up: it stays armed until it strikes.
        #expect(injector.powerLossSwapStep == 1)
        injector.consumeSwapPowerLoss()
        #expect(injector.powerLossSwapStep == nil)
        var stepped = FaultInjector(Faults([.powerLoss(.duringSwapStep(7))]))
        #expect(stepped.powerLossSwapStep == 7)
        stepped.consumeSwapPowerLoss()
        #expect(stepped.powerLossSwapStep == nil)
    }

    @Test("every fault describes itself")
    func descriptions() {
        let all: [Fault] = [
            .dropResponses(every: 1), .dropResponsesRandomly(probability: 0.5), .dropRequests(every: 2),
            .duplicateResponses(every: 3), .delayResponses(by: .seconds(1), every: 1), .reorderResponses(every: 2),
            .busy(count: 1), .corruptResponses(every: 1), .disconnect(afterRequests: 1), .disconnectOnReset,
            .powerLoss(.atRequest(1)), .powerLoss(.duringUpload(atOffset: 10)), .powerLoss(.duringSwap),
            .corruptFlash(atOffset: 10),
        ]
        #expect(Set(all.map(\.description)).count == all.count)
    }
}
