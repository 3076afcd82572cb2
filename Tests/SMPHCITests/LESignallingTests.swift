import SMPHCI
import Testing

struct LESignallingTests {
    static func payload(_ hex: String) throws -> [UInt8] {
        let pdu = try L2CAPPDU(bytes: try bytes(hex))
        #expect(pdu.channelID == .leSignalling)
        return pdu.payload
    }

    @Test func acceptsBumblesUpdateRequestWithBumblesResponse() throws {
        let answer = LESignalling.answer(try Self.payload(BumbleVectors.l2capConnectionParameterUpdateRequest))
        let expected = try L2CAPPDU(bytes: try bytes(BumbleVectors.l2capConnectionParameterUpdateResponseAccepted))
        #expect(
            answer
                == .acceptUpdate(
                    expected,
                    LEConnectionParameters(intervalMin: 24, intervalMax: 40, latency: 0, timeout: 400)
                )
        )
    }

    @Test func rejectsParametersOutOfRange() throws {
        // Interval_Min above Interval_Max.
        let request = L2CAPSignal(code: 0x12, identifier: 9, data: [40, 0, 24, 0, 0, 0, 0x90, 0x01])
        let response = L2CAPSignal(code: 0x13, identifier: 9, data: [0x01, 0x00]).pdu
        #expect(LESignalling.answer(request.encoded()) == .reply(response))
    }

    @Test func rejectsOtherRequestsAsBumbleWritesTheReject() throws {
        // An LE Credit Based Connection Request with identifier 7.
        let request = L2CAPSignal(
            code: 0x14,
            identifier: 7,
            data: [0x80, 0x00, 0x40, 0x00, 0xF7, 0x00, 0x17, 0x00, 0x0A, 0x00]
        )
        let expected = try L2CAPPDU(bytes: try bytes(BumbleVectors.l2capCommandRejectNotUnderstood))
        #expect(LESignalling.answer(request.encoded()) == .reply(expected))
    }

    @Test(arguments: [
        [UInt8]([0x01, 0x07, 0x02, 0x00, 0x00, 0x00]),  // Command Reject
        [0x13, 0x01, 0x02, 0x00, 0x00, 0x00],  // an update response
        [0x01, 0x07, 0xFF],  // a malformed Command Reject
    ])
    func neverAnswersARejectOrAResponse(payload: [UInt8]) {
        #expect(LESignalling.answer(payload) == .none)
    }

    @Test func rejectsMalformedRequests() {
        // An update request with 6 data bytes; a request whose length overruns; one byte.
        #expect(
            LESignalling.answer([0x12, 0x03, 0x06, 0x00, 1, 2, 3, 4, 5, 6]) == .reply(LESignalling.rejectForTests(3))
        )
        #expect(LESignalling.answer([0x12, 0x04, 0x08, 0x00, 1]) == .reply(LESignalling.rejectForTests(4)))
        #expect(LESignalling.answer([0x12]) == .reply(LESignalling.rejectForTests(0)))
    }
}

extension LESignalling {
    static func rejectForTests(_ identifier: UInt8) -> L2CAPPDU {
        L2CAPSignal(code: 0x01, identifier: identifier, data: [0x00, 0x00]).pdu
    }
}
