import SMPHCI
import Testing

struct HCIStatusTests {
    @Test(arguments: [
        (HCIStatus.remoteUserTerminatedConnection, "0x13 remote user terminated connection"),
        (.connectionTimeout, "0x08 connection timeout"),
        (.connectionFailedToBeEstablished, "0x3E connection failed to be established"),
        (.success, "0x00 success"),
        (HCIStatus(rawValue: 0x2F), "0x2F"),
    ])
    func describesCodesWithTheirNumbers(status: HCIStatus, text: String) {
        #expect(status.description == text)
    }

    @Test func onlyZeroIsSuccess() {
        #expect(HCIStatus.success.isSuccess)
        #expect((1...255).allSatisfy { !HCIStatus(rawValue: UInt8($0)).isSuccess })
    }

    @Test func anUnnamedCodeKeepsItsNumber() {
        let status = HCIStatus(rawValue: 0xEE)
        #expect(status.rawValue == 0xEE)
        #expect(status.name == nil)
    }
}
