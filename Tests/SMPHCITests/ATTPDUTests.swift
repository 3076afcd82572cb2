import SMPHCI
import Testing

struct ATTPDUTests {
    static let smpCharacteristic = BluetoothUUID.smpCharacteristic

    /// Each of Bumble's PDUs with the value it must decode to.
    static let bumble: [(String, ATTPDU)] = [
        (
            ATTVectors.errorResponse,
            .errorResponse(request: .writeRequest, handle: 0x0008, error: .insufficientAuthentication)
        ),
        (ATTVectors.exchangeMTURequest, .exchangeMTURequest(clientRxMTU: 498)),
        (ATTVectors.exchangeMTUResponse, .exchangeMTUResponse(serverRxMTU: 247)),
        (ATTVectors.findInformationRequest, .findInformationRequest(ATTHandleRange(start: 0x0008, end: 0x000A))),
        (
            ATTVectors.findInformationResponse16,
            .findInformationResponse(
                .uuid16([ATTHandleUUID16(handle: 0x0008, uuid: 0x2902), ATTHandleUUID16(handle: 0x0009, uuid: 0x2901)])
            )
        ),
        (
            ATTVectors.findInformationResponse128,
            .findInformationResponse(.uuid128([ATTHandleUUID128(handle: 0x0007, uuid: smpCharacteristic)]))
        ),
        (
            ATTVectors.findByTypeValueRequest,
            .findByTypeValueRequest(.all, type: 0x2800, value: BluetoothUUID.smpService.littleEndianBytes)
        ),
        (
            ATTVectors.findByTypeValueResponse,
            .findByTypeValueResponse([ATTHandleRange(start: 5, end: 8), ATTHandleRange(start: 0x10, end: 0x14)])
        ),
        (
            ATTVectors.readByTypeRequest16,
            .readByTypeRequest(ATTHandleRange(start: 5, end: 8), type: .characteristicDeclaration)
        ),
        (ATTVectors.readByTypeRequest128, .readByTypeRequest(.all, type: smpCharacteristic)),
        (
            ATTVectors.readByTypeResponse,
            .readByTypeResponse([
                ATTHandleValue(handle: 0x0002, value: [0x02, 0x03, 0x00, 0x00, 0x2A]),
                ATTHandleValue(handle: 0x0009, value: [0x10, 0x0A, 0x00, 0x29, 0x2A]),
            ])
        ),
        (ATTVectors.readRequest, .readRequest(handle: 3)),
        (ATTVectors.readResponse, .readResponse(value: Array("Zephyr".utf8))),
        (ATTVectors.readBlobRequest, .readBlobRequest(handle: 3, offset: 22)),
        (ATTVectors.readBlobResponse, .readBlobResponse(value: Array("SMP".utf8))),
        (ATTVectors.readByGroupTypeRequest, .readByGroupTypeRequest(.all, type: .primaryService)),
        (
            ATTVectors.readByGroupTypeResponse,
            .readByGroupTypeResponse([
                ATTGroupValue(range: ATTHandleRange(start: 1, end: 3), value: [0x00, 0x18]),
                ATTGroupValue(range: ATTHandleRange(start: 4, end: 4), value: [0x01, 0x18]),
            ])
        ),
        (ATTVectors.writeRequest, .writeRequest(handle: 8, value: [0x01, 0x00])),
        (ATTVectors.writeResponse, .writeResponse),
        (ATTVectors.writeCommand, .writeCommand(handle: 7, value: [0x08, 0, 0, 0x08, 0, 0x01, 0, 0])),
        (
            ATTVectors.handleValueNotification,
            .handleValueNotification(handle: 7, value: [0x09, 0, 0, 0x02, 0, 0x01, 0, 0, 0xA0])
        ),
        (ATTVectors.handleValueIndication, .handleValueIndication(handle: 7, value: [1, 2, 3, 4])),
        (ATTVectors.handleValueConfirmation, .handleValueConfirmation),
        (ATTVectors.prepareWriteRequest, .unknown(ATTOpcode(rawValue: 0x16), [0x03, 0x00, 0x00, 0x00, 0x61, 0x62])),
        (ATTVectors.signedWriteCommand, .unknown(ATTOpcode(rawValue: 0xD2), [0x07, 0x00, 0x61, 0x62])),
    ]

    @Test(arguments: bumble)
    func decodesBumblesPDUAndEncodesItBackByteForByte(hex: String, expected: ATTPDU) throws {
        let bytes = try bytes(hex)
        let pdu = try ATTPDU(bytes: bytes)
        #expect(pdu == expected)
        #expect(pdu.opcode.rawValue == bytes[0])
        #expect(pdu.encoded() == bytes)
    }

    @Test func theTableCoversEveryNamedOpcode() {
        // 21 named opcodes (two formats of Find Information Response, two sizes of Read By Type
        // Request) and two unknown ones.
        let opcodes = Set(Self.bumble.map(\.1.opcode))
        #expect(opcodes.count == 23)
        #expect(opcodes.filter { $0.name != nil }.count == 21)
    }

    @Test func aUUIDOnTheBaseUUIDGoesOutInTwoBytesAnyOtherInSixteen() {
        let short = ATTPDU.readByGroupTypeRequest(.all, type: BluetoothUUID(UInt16(0x2800))).encoded()
        #expect(short == [0x10, 0x01, 0x00, 0xFF, 0xFF, 0x00, 0x28])
        let long = ATTPDU.readByTypeRequest(.all, type: .smpCharacteristic).encoded()
        #expect(long.count == 5 + 16)
        #expect(Array(long[5...]) == BluetoothUUID.smpCharacteristic.littleEndianBytes)
    }

    @Test func aResponseListTakesItsLengthFromTheFirstEntry() {
        let pdu = ATTPDU.readByTypeResponse([ATTHandleValue(handle: 3, value: [1, 2, 3])])
        #expect(pdu.encoded() == [0x09, 0x05, 0x03, 0x00, 1, 2, 3])
        let group = ATTPDU.readByGroupTypeResponse([ATTGroupValue(range: ATTHandleRange(start: 1, end: 2), value: [9])])
        #expect(group.encoded() == [0x11, 0x05, 0x01, 0x00, 0x02, 0x00, 9])
    }
}
