import Testing

@testable import SMPHCI

struct ATTServerRoleTests {
    @Test(arguments: [(UInt16(0), 23), (22, 23), (23, 23), (100, 100), (498, 498), (499, 498)])
    func theEffectiveMTUIsBetween23AndOurs(peer: UInt16, mtu: Int) {
        #expect(ATTServerRole.effectiveMTU(peer: peer) == mtu)
    }

    @Test(arguments: [
        (ATTPDU.handleValueNotification(handle: 7, value: []), ATTServerRole.Answer.notForServer),
        (.handleValueIndication(handle: 7, value: []), .notForServer),
        (.writeResponse, .notForServer),
        (.unknown(ATTOpcode(rawValue: 0x21), []), .notForServer),
        (.unknown(ATTOpcode(rawValue: 0x62), []), .ignore),
        (.writeCommand(handle: 7, value: [1]), .ignore),
        (.readBlobRequest(handle: 9, offset: 1), .reply([0x01, 0x0C, 0x09, 0x00, 0x01])),
        (.writeRequest(handle: 9, value: [1]), .reply([0x01, 0x12, 0x09, 0x00, 0x01])),
        (.findByTypeValueRequest(.all, type: 0x2800, value: [0x00, 0x18]), .reply([0x01, 0x06, 0x01, 0x00, 0x0A])),
        (
            .readByTypeRequest(ATTHandleRange(start: 3, end: 9), type: .characteristicDeclaration),
            .reply([0x01, 0x08, 0x03, 0x00, 0x0A])
        ),
    ])
    func anEmptyServerAnswers(pdu: ATTPDU, answer: ATTServerRole.Answer) {
        var mtu = 23
        #expect(ATTServerRole.answerAsEmptyServer(pdu, mtu: &mtu) == answer)
        #expect(mtu == 23)
    }

    @Test(arguments: [[UInt8](), [0x52], [0x03, 0x01], [0x1B, 0x07], [0xD2, 0x00]])
    func onlyUndecodableRequestsAreAnswered(bytes: [UInt8]) {
        #expect(ATTServerRole.answerUndecodable(bytes) == nil)
    }
}
