import SMPHCI
import Testing

struct GATTClientChannelTests {
    static let channel = GATTClientChannel(mtu: 498, valueHandle: 0x0007, cccdHandle: 0x0008)

    @Test func writesUpToMTUMinusThreeAsWriteCommands() throws {
        #expect(Self.channel.maximumWriteLength == 495)
        let value = [UInt8](repeating: 0xA5, count: 495)
        #expect(try Self.channel.writeCommand(value) == [0x52, 0x07, 0x00] + value)
        let error = #expect(throws: HCIError(.limitExceeded)) { try Self.channel.writeCommand(value + [0]) }
        #expect(error?.message.contains("496 bytes") == true)
    }

    @Test func writesWhatBumbleWrites() throws {
        let value: [UInt8] = [0x08, 0x00, 0x00, 0x08, 0x00, 0x01, 0x00, 0x00]
        #expect(try Self.channel.writeCommand(value) == (try bytes(ATTVectors.writeCommand)))
    }

    @Test func anMTUBelowTheDefaultCountsAsTheDefault() {
        #expect(GATTClientChannel(mtu: 5, valueHandle: 7, cccdHandle: 8).maximumWriteLength == 20)
    }

    @Test func bumblesNotificationGivesItsValue() throws {
        var channel = Self.channel
        let output = try channel.receive(try bytes(ATTVectors.serverNotification))
        #expect(output == GATTClientChannel.Output(value: [0x09, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0xA0]))
    }

    @Test func anIndicationGivesItsValueAndIsConfirmed() throws {
        var channel = Self.channel
        let output = try channel.receive(try bytes(ATTVectors.handleValueIndication))
        #expect(output == GATTClientChannel.Output(value: [1, 2, 3, 4], reply: [0x1E]))
        let other = try channel.receive(ATTPDU.handleValueIndication(handle: 0x0020, value: [1]).encoded())
        #expect(other == GATTClientChannel.Output(reply: [0x1E]))
    }

    @Test func notificationsOfOtherHandlesAreIgnored() throws {
        var channel = Self.channel
        #expect(try channel.receive(ATTPDU.handleValueNotification(handle: 0x0020, value: [1]).encoded()) == .init())
    }

    @Test func thePeersRequestsAreAnsweredAndItsMTUExchangeTakesEffect() throws {
        var channel = Self.channel
        let mtu = try channel.receive(ATTPDU.exchangeMTURequest(clientRxMTU: 100).encoded())
        #expect(mtu == GATTClientChannel.Output(reply: ATTPDU.exchangeMTUResponse(serverRxMTU: 498).encoded()))
        #expect(channel.maximumWriteLength == 97)
        let find = try channel.receive(ATTPDU.findInformationRequest(.all).encoded())
        let notFound = ATTPDU.errorResponse(request: .findInformationRequest, handle: 1, error: .attributeNotFound)
        #expect(find == GATTClientChannel.Output(reply: notFound.encoded()))
        let unknown = try channel.receive([0x20, 0x01, 0x00])
        let unsupported = ATTPDU.errorResponse(
            request: ATTOpcode(rawValue: 0x20),
            handle: 0,
            error: .requestNotSupported
        )
        #expect(unknown == GATTClientChannel.Output(reply: unsupported.encoded()))
        #expect(try channel.receive([0xD2, 0x07, 0x00]) == .init())
        #expect(try channel.receive([0x52, 0x07]) == .init())
        let invalid = try channel.receive([0x0A, 0x03])
        #expect(
            invalid
                == GATTClientChannel.Output(
                    reply: ATTPDU.errorResponse(request: .readRequest, handle: 0, error: .invalidPDU).encoded()
                )
        )
    }

    @Test(arguments: [[UInt8]([0x13]), [0x03, 0xF2, 0x01], [0x01, 0x12, 0x08, 0x00, 0x05], [0x1E], [0x0B, 0x01]])
    func aResponseIsAProtocolViolation(pdu: [UInt8]) {
        var channel = Self.channel
        #expect(throws: HCIError(.protocolViolation)) { try channel.receive(pdu) }
    }

    @Test(arguments: [[UInt8](), [0x1B, 0x07], [0x1D, 0x00, 0x00, 0x01], [0x03, 0xF2]])
    func aMalformedPDUThrows(pdu: [UInt8]) {
        var channel = Self.channel
        #expect(throws: HCIError(.malformedPacket)) { try channel.receive(pdu) }
    }
}
