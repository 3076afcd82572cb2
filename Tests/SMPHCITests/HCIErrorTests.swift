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
}
