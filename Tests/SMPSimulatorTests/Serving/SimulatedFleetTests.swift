import Testing

@testable import SMPSimulator

/// The fleet's pure parts: the share of faulty devices as people write it, and the seeded draw.
@Suite struct SimulatedFleetTests {
    @Test(arguments: [("0.1", 0.1), ("10%", 0.1), (" 25% ", 0.25), ("0", 0.0), ("1", 1.0), ("100%", 1.0)])
    func aShareIsReadAsAFractionOrAPercentage(text: String, share: Double) throws {
        #expect(try SimulatedFleet.faultShare(parsing: text) == share)
    }

    @Test(arguments: [
        ("ten", "'ten' is not a share (0.1 or 10%)"),
        ("%", "'%' is not a share (0.1 or 10%)"),
        ("nan", "'nan' is not a share (0.1 or 10%)"),
        ("1.5", "'1.5' is not between 0 and 1 (0% and 100%)"),
        ("-10%", "'-10%' is not between 0 and 1 (0% and 100%)"),
    ])
    func aBadShareSaysWhatIsAccepted(text: String, message: String) {
        #expect(throws: ConfigurationError(message)) { try SimulatedFleet.faultShare(parsing: text) }
    }

    @Test func theDrawDealsTheKindsInTurnToTheSameDevicesForTheSameSeed() {
        let first = SimulatedFleet.draw(count: 10, share: 0.3, kinds: [.dead, .refusing], seed: 7)
        #expect(first == SimulatedFleet.draw(count: 10, share: 0.3, kinds: [.dead, .refusing], seed: 7))
        #expect(first.compactMap { $0 } == [.dead, .refusing, .dead])
        #expect(SimulatedFleet.draw(count: 10, share: 0, kinds: [.dead], seed: 7).allSatisfy { $0 == nil })
    }
}
