import SMPHCI
import Testing

struct GATTServerTests {
    static let name = "Zephyr SMP simulator"

    /// Bumble's answers to our client setup's requests, in order.
    static let bumbleSetup: [(String, String)] = [
        (ATTVectors.setupMTURequest, ATTVectors.setupMTUAnswer),
        (ATTVectors.setupServiceRequest, ATTVectors.setupServiceAnswer),
        (ATTVectors.setupCharacteristicsRequest, ATTVectors.setupCharacteristicsAnswer),
        (ATTVectors.setupCharacteristicsMoreRequest, ATTVectors.setupCharacteristicsMoreAnswer),
        (ATTVectors.setupDescriptorsRequest, ATTVectors.setupDescriptorsAnswer),
        (ATTVectors.setupSubscribeRequest, ATTVectors.setupSubscribeAnswer),
    ]

    @Test func answersTheClientSetupAsBumblesServerDoesAndNotifiesAsItDoes() throws {
        var server = GATTServer(deviceName: Self.name)
        #expect(!server.notificationsEnabled)
        // Bumble's server offers 517 (its GATT_SERVER_DEFAULT_MAX_MTU), ours 498; the rest is the same.
        #expect(try ATTPDU(bytes: try bytes(ATTVectors.setupMTUAnswer)) == .exchangeMTUResponse(serverRxMTU: 517))
        let mtu = server.receive(try bytes(ATTVectors.setupMTURequest))
        #expect(mtu == GATTServer.Output(reply: ATTPDU.exchangeMTUResponse(serverRxMTU: 498).encoded()))
        for (request, answer) in Self.bumbleSetup.dropFirst() {
            #expect(server.receive(try bytes(request)) == GATTServer.Output(reply: try bytes(answer)), "\(request)")
        }
        #expect(server.mtu == 498)
        #expect(server.notificationsEnabled)
        let value: [UInt8] = [0x09, 0x00, 0x00, 0x02, 0x00, 0x01, 0x00, 0x00, 0xA0]
        #expect(try server.notification(value) == (try bytes(ATTVectors.serverNotification)))
    }

    @Test(arguments: [(UInt16(23), 23), (10, 23), (185, 185), (498, 498), (517, 498), (0xFFFF, 498)])
    func theMTUIsTheSmallerOfTheTwoAndAtLeast23(clientRxMTU: UInt16, mtu: Int) {
        var server = GATTServer(deviceName: "x")
        let output = server.receive(ATTPDU.exchangeMTURequest(clientRxMTU: clientRxMTU).encoded())
        #expect(output.reply == ATTPDU.exchangeMTUResponse(serverRxMTU: 498).encoded())
        #expect(server.mtu == mtu)
        #expect(server.maximumNotificationLength == mtu - 3)
    }

    /// Requests and the Error Response each must get.
    static let refusals: [(ATTPDU, ATTOpcode, UInt16, ATTErrorCode)] = [
        (.writeRequest(handle: 0x0008, value: [0x01]), .writeRequest, 0x0008, .invalidAttributeValueLength),
        (
            .writeRequest(handle: 0x0008, value: [0x01, 0x00, 0x00]), .writeRequest, 0x0008,
            .invalidAttributeValueLength
        ),
        (.writeRequest(handle: 0x0008, value: [0x02, 0x00]), .writeRequest, 0x0008, .valueNotAllowed),
        (.writeRequest(handle: 0x0008, value: [0x01, 0x01]), .writeRequest, 0x0008, .valueNotAllowed),
        (.writeRequest(handle: 0x0003, value: [0x41]), .writeRequest, 0x0003, .writeNotPermitted),
        (.writeRequest(handle: 0x0005, value: [0x41]), .writeRequest, 0x0005, .writeNotPermitted),
        (.readRequest(handle: 0x0007), .readRequest, 0x0007, .readNotPermitted),
        (.readBlobRequest(handle: 0x0007, offset: 0), .readBlobRequest, 0x0007, .readNotPermitted),
        (.readBlobRequest(handle: 0x0009, offset: 0), .readBlobRequest, 0x0009, .invalidHandle),
        (.readByTypeRequest(.all, type: .smpCharacteristic), .readByTypeRequest, 0x0007, .readNotPermitted),
        (
            .readByTypeRequest(ATTHandleRange(start: 9, end: 0xFFFF), type: .characteristicDeclaration),
            .readByTypeRequest, 9, .attributeNotFound
        ),
        (
            .findInformationRequest(ATTHandleRange(start: 9, end: 0xFFFF)), .findInformationRequest, 9,
            .attributeNotFound
        ),
        (
            .readByGroupTypeRequest(.all, type: BluetoothUUID(UInt16(0x1800))), .readByGroupTypeRequest, 1,
            .unsupportedGroupType
        ),
        (
            .unknown(ATTOpcode(rawValue: 0x20), [0x03, 0x00, 0x07, 0x00]), ATTOpcode(rawValue: 0x20), 0,
            .requestNotSupported
        ),
        (.unknown(ATTOpcode(rawValue: 0x3F), []), ATTOpcode(rawValue: 0x3F), 0, .requestNotSupported),
    ]

    @Test(arguments: refusals)
    func refusesWithTheRightError(request: ATTPDU, opcode: ATTOpcode, handle: UInt16, error: ATTErrorCode) {
        var server = GATTServer(deviceName: Self.name)
        let expected = ATTPDU.errorResponse(request: opcode, handle: handle, error: error).encoded()
        #expect(server.receive(request.encoded()) == GATTServer.Output(reply: expected))
        #expect(!server.notificationsEnabled)
    }

    /// Requests that do not decode: "invalid handle" for a bad handle or range, else "invalid PDU".
    static let undecodable: [([UInt8], ATTOpcode, UInt16, ATTErrorCode)] = [
        ([0x0A, 0x03], .readRequest, 0, .invalidPDU),
        ([0x0A, 0x00, 0x00], .readRequest, 0, .invalidHandle),
        ([0x12, 0x00, 0x00, 0x01], .writeRequest, 0, .invalidHandle),
        ([0x08, 0x09, 0x00, 0x01, 0x00, 0x03, 0x28], .readByTypeRequest, 9, .invalidHandle),
        ([0x10, 0x00, 0x00, 0xFF, 0xFF, 0x00, 0x28], .readByGroupTypeRequest, 0, .invalidHandle),
        ([0x04, 0x01, 0x00, 0xFF, 0xFF, 0x00], .findInformationRequest, 0, .invalidPDU),
        ([0x08, 0x01, 0x00, 0xFF, 0xFF, 0x03, 0x28, 0x00], .readByTypeRequest, 0, .invalidPDU),
        ([0x02, 0xF2], .exchangeMTURequest, 0, .invalidPDU),
    ]

    @Test(arguments: undecodable)
    func anUndecodableRequestGetsAnErrorResponse(bytes: [UInt8], opcode: ATTOpcode, handle: UInt16, error: ATTErrorCode)
    {
        var server = GATTServer(deviceName: Self.name)
        let expected = ATTPDU.errorResponse(request: opcode, handle: handle, error: error).encoded()
        #expect(server.receive(bytes) == GATTServer.Output(reply: expected))
    }

    @Test(arguments: [
        [UInt8](), [0x52, 0x07], [0xD2, 0x07, 0x00, 0x61], [0x7F], [0x13], [0x01, 0x12, 0x08, 0x00, 0x05], [0x1E],
        [0x1B, 0x07, 0x00, 0x01], [0x1D, 0x07, 0x00, 0x01], [0x52, 0x03, 0x00, 0x41],
    ])
    func commandsItDoesNotTakeAndPDUsOfAServerAreIgnored(bytes: [UInt8]) {
        var server = GATTServer(deviceName: Self.name)
        #expect(server.receive(bytes) == GATTServer.Output())
    }

    @Test func smpWritesGoToTheSMPServerWithOrWithoutResponse() {
        var server = GATTServer(deviceName: Self.name)
        let frame: [UInt8] = [0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0xBF, 0xFF]
        let command = server.receive(ATTPDU.writeCommand(handle: GATTServer.smpValueHandle, value: frame).encoded())
        #expect(command == GATTServer.Output(smpData: frame))
        let request = server.receive(ATTPDU.writeRequest(handle: GATTServer.smpValueHandle, value: frame).encoded())
        #expect(request == GATTServer.Output(reply: ATTPDU.writeResponse.encoded(), smpData: frame))
    }

    @Test func theCCCDSwitchesNotificationsAndReadsBack() throws {
        var server = GATTServer(deviceName: Self.name)
        let write = { (value: [UInt8]) in ATTPDU.writeRequest(handle: GATTServer.cccdHandle, value: value).encoded() }
        #expect(server.receive(write([0x01, 0x00])).reply == ATTPDU.writeResponse.encoded())
        #expect(server.notificationsEnabled)
        let read = server.receive(ATTPDU.readRequest(handle: GATTServer.cccdHandle).encoded())
        #expect(read.reply == ATTPDU.readResponse(value: [0x01, 0x00]).encoded())
        #expect(server.receive(write([0x00, 0x00])).reply == ATTPDU.writeResponse.encoded())
        #expect(!server.notificationsEnabled)
        #expect(throws: HCIError(.protocolViolation)) { try server.notification([0x01]) }
    }

    @Test func aNotificationLongerThanTheMTUAllowsIsAnError() throws {
        var server = GATTServer(deviceName: Self.name)
        _ = server.receive(ATTPDU.writeRequest(handle: GATTServer.cccdHandle, value: [0x01, 0x00]).encoded())
        #expect(try server.notification([UInt8](repeating: 7, count: 20)).count == 23)
        #expect(throws: HCIError(.limitExceeded)) { try server.notification([UInt8](repeating: 7, count: 21)) }
    }

    @Test func aValueLongerThanAnAttributeMayBeIsRefused() {
        var server = GATTServer(deviceName: Self.name)
        let value = [UInt8](repeating: 0, count: 513)
        let output = server.receive(ATTPDU.writeRequest(handle: GATTServer.smpValueHandle, value: value).encoded())
        let error = ATTPDU.errorResponse(request: .writeRequest, handle: 0x0007, error: .invalidAttributeValueLength)
        #expect(output == GATTServer.Output(reply: error.encoded()))
        #expect(server.receive(ATTPDU.writeCommand(handle: 0x0007, value: value).encoded()) == GATTServer.Output())
    }
}
