import SMPHCI
import Testing

struct ATTErrorCodeTests {
    @Test(arguments: [
        (ATTErrorCode.invalidHandle, UInt8(0x01)), (.readNotPermitted, 0x02), (.writeNotPermitted, 0x03),
        (.invalidPDU, 0x04), (.insufficientAuthentication, 0x05), (.requestNotSupported, 0x06), (.invalidOffset, 0x07),
        (.insufficientAuthorization, 0x08), (.prepareQueueFull, 0x09), (.attributeNotFound, 0x0A),
        (.attributeNotLong, 0x0B), (.encryptionKeySizeTooShort, 0x0C), (.invalidAttributeValueLength, 0x0D),
        (.unlikelyError, 0x0E), (.insufficientEncryption, 0x0F), (.unsupportedGroupType, 0x10),
        (.insufficientResources, 0x11), (.databaseOutOfSync, 0x12), (.valueNotAllowed, 0x13),
        (.cccdImproperlyConfigured, 0xFD), (.procedureAlreadyInProgress, 0xFE), (.outOfRange, 0xFF),
    ])
    func everyStandardCodeHasItsNumberAndAName(code: ATTErrorCode, raw: UInt8) {
        #expect(code.rawValue == raw)
        #expect(code.name != nil)
    }

    @Test func theDescriptionNamesTheCodeAndItsNumber() {
        #expect(ATTErrorCode.insufficientAuthentication.description == "insufficient authentication (0x05)")
        #expect(ATTErrorCode(rawValue: 0x85).description == "application error (0x85)")
        #expect(ATTErrorCode(rawValue: 0x42).description == "0x42")
    }
}
