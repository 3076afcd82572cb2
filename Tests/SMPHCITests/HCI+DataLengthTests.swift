import SMPHCI
import Testing

struct HCIDataLengthTests {
    @Test func theDefaultsAreTheLongestPacketOn1M() {
        let command = HCI.LESetDataLength(connectionHandle: 1)
        #expect(command.txOctets == 251)
        #expect(command.txTime == 2120)
    }

    @Test func theCommandCompleteEchoesTheHandle() throws {
        guard case .commandComplete(let complete) = try h4Event(GAPVectors.commandCompleteSetDataLength) else {
            Issue.record("not a Command Complete")
            return
        }
        #expect(try complete.returnParameters(of: HCI.LESetDataLength.self).connectionHandle == 0x0040)
    }

    @Test func bumblesControllerDoesNotKnowTheCommand() throws {
        guard case .commandComplete(let complete) = try h4Event(GAPVectors.bumbleSetDataLength0) else {
            Issue.record("not a Command Complete")
            return
        }
        #expect(complete.status == .unknownCommand)
        #expect(throws: HCIError(.commandFailed)) { try complete.returnParameters(of: HCI.LESetDataLength.self) }
    }

    @Test func parsesBumblesDataLengthChange() throws {
        let event = try h4Event(GAPVectors.leDataLengthChange)
        let expected = HCI.LEDataLengthChange(
            connectionHandle: 0x0040,
            maxTxOctets: 251,
            maxTxTime: 2120,
            maxRxOctets: 27,
            maxRxTime: 328
        )
        #expect(event == .leDataLengthChange(expected))
        #expect(H4Encoder.encode(.event(expected.packet)) == (try bytes(GAPVectors.leDataLengthChange)))
    }

    @Test func aShortDataLengthChangeIsMalformed() {
        let packet = HCIEventPacket(code: .leMeta, parameters: [0x07, 0x40, 0x00, 0xFB])
        #expect(throws: HCIError(.malformedPacket)) { try HCIEvent(packet) }
    }
}
