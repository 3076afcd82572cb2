import SMPHCI
import Testing

struct GATTServerReadingTests {
    /// Bumble's GATT server's answers to requests at the default MTU, with the same database.
    static let bumbleAtDefaultMTU: [(String, String)] = [
        (ATTVectors.mtu23ServicesRequest, ATTVectors.mtu23ServicesAnswer),
        (ATTVectors.mtu23ServicesAfterGAPRequest, ATTVectors.mtu23ServicesAfterGAPAnswer),
        (ATTVectors.mtu23ServicesAfterGATTRequest, ATTVectors.mtu23ServicesAfterGATTAnswer),
        (ATTVectors.mtu23ServicesEndRequest, ATTVectors.mtu23ServicesEndAnswer),
        (ATTVectors.mtu23CharacteristicsRequest, ATTVectors.mtu23CharacteristicsAnswer),
        (ATTVectors.mtu23InformationRequest, ATTVectors.mtu23InformationAnswer),
        (ATTVectors.mtu23InformationSMPRequest, ATTVectors.mtu23InformationSMPAnswer),
        (ATTVectors.mtu23ReadNameRequest, ATTVectors.mtu23ReadNameAnswer),
        (ATTVectors.mtu23ReadNameBlobRequest, ATTVectors.mtu23ReadNameBlobAnswer),
        (ATTVectors.mtu23ReadInvalidRequest, ATTVectors.mtu23ReadInvalidAnswer),
        (ATTVectors.mtu23WriteInvalidRequest, ATTVectors.mtu23WriteInvalidAnswer),
        (ATTVectors.mtu23GroupTypeCharacteristicRequest, ATTVectors.mtu23GroupTypeCharacteristicAnswer),
        (ATTVectors.mtu23PrepareWriteRequest, ATTVectors.mtu23PrepareWriteAnswer),
        (ATTVectors.mtu23FindDeviceNameRequest, ATTVectors.mtu23FindDeviceNameAnswer),
        (ATTVectors.mtu23FindNothingRequest, ATTVectors.mtu23FindNothingAnswer),
    ]

    @Test(arguments: bumbleAtDefaultMTU)
    func answersAtTheDefaultMTUAsBumblesServerDoes(request: String, answer: String) throws {
        var server = GATTServer(deviceName: GATTServerTests.name)
        #expect(server.receive(try bytes(request)) == GATTServer.Output(reply: try bytes(answer)))
    }

    @Test func aBlobReadOfAShortValueAnswersWhereBumbleRefuses() throws {
        // Bumble answers "attribute not long" to any Read Blob of a value that fits one Read
        // Response; the specification allows that but does not ask it, and this server answers
        // with the rest of the value (Zephyr's GATT server checks only the offset, as far as we
        // know).
        let bumble = try ATTPDU(bytes: try bytes(ATTVectors.mtu23ReadNameBlobShortAnswer))
        #expect(bumble == .errorResponse(request: .readBlobRequest, handle: 3, error: .attributeNotLong))
        var server = GATTServer(deviceName: GATTServerTests.name)
        let output = server.receive(try bytes(ATTVectors.mtu23ReadNameBlobShortRequest))
        #expect(output.reply == ATTPDU.readBlobResponse(value: Array(GATTServerTests.name.utf8.dropFirst(2))).encoded())
    }

    @Test func aLongNameIsReadInPiecesOfMTUMinusOne() throws {
        let name = String(repeating: "n", count: 30)
        var server = GATTServer(deviceName: name)
        let first = server.receive(ATTPDU.readRequest(handle: 0x0003).encoded())
        #expect(first.reply == ATTPDU.readResponse(value: Array(name.utf8.prefix(22))).encoded())
        let rest = server.receive(ATTPDU.readBlobRequest(handle: 0x0003, offset: 22).encoded())
        #expect(rest.reply == ATTPDU.readBlobResponse(value: Array(name.utf8.suffix(8))).encoded())
        let end = server.receive(ATTPDU.readBlobRequest(handle: 0x0003, offset: 30).encoded())
        #expect(end.reply == ATTPDU.readBlobResponse(value: []).encoded())
    }

    @Test func theSMPServiceIsFoundByItsUUIDAndItsCharacteristicDeclaredWithZephyrsProperties() throws {
        var server = GATTServer(deviceName: GATTServerTests.name)
        let find = ATTPDU.findByTypeValueRequest(.all, type: 0x2800, value: BluetoothUUID.smpService.littleEndianBytes)
        #expect(
            server.receive(find.encoded()).reply
                == ATTPDU.findByTypeValueResponse([ATTHandleRange(start: 5, end: 8)]).encoded()
        )
        let read = server.receive(
            ATTPDU.readByTypeRequest(ATTHandleRange(start: 5, end: 8), type: .characteristicDeclaration).encoded()
        )
        let reply = try ATTPDU(bytes: try #require(read.reply))
        guard case .readByTypeResponse(let entries) = reply, let value = entries.first?.value else {
            Issue.record("not a Read By Type Response: \(reply)")
            return
        }
        #expect(GATTCharacteristicProperties(rawValue: value[0]) == [.writeWithoutResponse, .write, .notify])
        #expect(Array(value[1...2]) == [0x07, 0x00])
    }
}
