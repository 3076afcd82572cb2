import SMPHCI
import Testing

struct LinkTuningTests {
    static func requesting(handle: UInt16 = 0x0040) -> LinkTuning {
        var tuning = LinkTuning(connectionHandle: handle)
        _ = tuning.start()
        return tuning
    }

    @Test func asksForTheLongestPacketsOn1M() throws {
        var tuning = LinkTuning(connectionHandle: 0x0040)
        guard case .send(let packet) = tuning.start() else {
            Issue.record("nothing sent")
            return
        }
        #expect(H4Encoder.encode(.command(packet)) == (try bytes(GAPVectors.leSetDataLength)))
        #expect(tuning.start() == .wait)
    }

    @Test func anAcceptedRequestFinishesAccepted() throws {
        var tuning = Self.requesting()
        #expect(tuning.receive(try GAP.event(GAPVectors.commandCompleteSetDataLength)) == .finished(.accepted))
        #expect(tuning.timedOut() == .wait)
    }

    @Test func bumblesUnknownCommandFinishesRefused() throws {
        var tuning = Self.requesting(handle: 0x0001)
        let action = tuning.receive(try GAP.event(GAPVectors.bumbleSetDataLength0))
        #expect(action == .finished(.refused(.unknownCommand)))
        guard case .finished(let outcome) = action else { return }
        #expect(!outcome.isAccepted)
    }

    @Test(arguments: [HCIStatus.unknownCommand, .unsupportedFeatureOrParameterValue, .unknownConnectionIdentifier])
    func aRefusalByCommandStatusFinishesRefused(status: HCIStatus) {
        var tuning = Self.requesting()
        #expect(tuning.receive(GAP.status(.leSetDataLength, status)) == .finished(.refused(status)))
    }

    @Test func noAnswerFinishesUnanswered() {
        var tuning = Self.requesting()
        #expect(tuning.timedOut() == .finished(.unanswered))
        // A late answer changes nothing.
        #expect(tuning.receive(GAP.complete(.leSetDataLength)) == .wait)
    }

    /// Events that do not answer this request.
    static let foreign: [HCIEvent] = [
        // Another connection's answer, accepted and refused.
        .commandComplete(
            .init(numHCICommandPackets: 1, opcode: .leSetDataLength, returnParameters: [0x00, 0x41, 0x00])
        ),
        .commandComplete(
            .init(numHCICommandPackets: 1, opcode: .leSetDataLength, returnParameters: [0x12, 0x41, 0x00])
        ),
        GAP.complete(.leSetScanEnable, .commandDisallowed),
        GAP.status(.leSetDataLength),
        GAP.connectionComplete(role: .central, peer: GAP.advertiser),
    ]

    @Test(arguments: foreign)
    func otherAnswersAreIgnored(event: HCIEvent) {
        var tuning = Self.requesting()
        #expect(tuning.receive(event) == .wait)
        #expect(tuning.receive(GAP.complete(.leSetDataLength)) == .finished(.accepted))
    }

    @Test func dataLengthChangesOfThisConnectionAreReportedWhenever() throws {
        let change = try GAP.event(GAPVectors.leDataLengthChange)
        guard case .leDataLengthChange(let parsed) = change else {
            Issue.record("not a Data Length Change")
            return
        }
        var tuning = Self.requesting()
        #expect(tuning.receive(change) == .dataLengthChanged(parsed))
        _ = tuning.receive(GAP.complete(.leSetDataLength))
        #expect(tuning.receive(change) == .dataLengthChanged(parsed))
        var other = Self.requesting(handle: 0x0041)
        #expect(other.receive(change) == .wait)
    }
}
