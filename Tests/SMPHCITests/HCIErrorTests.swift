import SMPHCI
import Testing

struct HCIErrorTests {
    @Test func equalityComparesCodesOnly() {
        #expect(HCIError(.malformedPacket, "one") == HCIError(.malformedPacket, "two"))
        #expect(HCIError(.malformedPacket) != HCIError(.timeout))
    }

    @Test func theDescriptionNamesTheLayerCodeAndMessage() {
        let error = HCIError(.commandFailed, "Reset: 0x0C command disallowed", status: .commandDisallowed)
        #expect(error.description == "HCI: command failed: Reset: 0x0C command disallowed")
        #expect(error.status == .commandDisallowed)
    }

    @Test func anATTRefusalCarriesThePeersErrorCode() {
        let error = HCIError(.attributeRequestFailed, "refused", attError: .insufficientAuthentication)
        #expect(error.attError == .insufficientAuthentication)
        #expect(error.description == "HCI: attribute request failed: refused")
        #expect(HCIError(.missingAttribute, "no SMP service").description == "HCI: missing attribute: no SMP service")
        #expect(HCIError(.missingAttribute) != HCIError(.attributeRequestFailed))
    }
}
