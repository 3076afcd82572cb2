import SMPHCI
import Testing

struct HCICommandCreditsTests {
    @Test func oneCommandAfterPowerOn() {
        var credits = HCICommandCredits()
        let first = credits.take()
        let second = credits.take()
        #expect(first)
        #expect(!second)
    }

    @Test func theControllersNumberReplacesTheCountItDoesNotAddToIt() {
        var credits = HCICommandCredits()
        credits.update(numHCICommandPackets: 3)
        credits.update(numHCICommandPackets: 2)
        #expect(credits.available == 2)
        credits.update(numHCICommandPackets: 0)
        let taken = credits.take()
        #expect(!taken)
    }
}
