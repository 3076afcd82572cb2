import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct ImageManagementTests {
    static let image = Data(0..<64)
    static let imageSHA = Data(TestBytes.hex("fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d9151108"))

    @Test(arguments: [
        RequestCase(
            ImageManagement.Upload(offset: 0, data: image.prefix(32), length: 64, sha256: imageSHA, image: 0),
            sequence: 1,
            "0a00006000010101a5636c656e1840636f666600637368615820fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1"
                + "d915110864646174615820000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f65696d61676500"
        ),
        RequestCase(
            ImageManagement.Upload(offset: 32, data: image.suffix(32)),
            sequence: 2,
            "0a00002e00010201a2636f6666182064646174615820202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
        ),
        RequestCase(
            ImageManagement.Upload(
                offset: 0,
                data: Data([1, 2]),
                length: 4096,
                sha256: Data(0..<32),
                image: 1,
                upgrade: true
            ),
            "0a00004b00010001a6636c656e191000636f666600637368615820000102030405060708090a0b0c0d0e0f101112131415161718191a1b"
                + "1c1d1e1f646461746142010265696d616765016775706772616465f5"
        ),
        RequestCase(ImageManagement.StateRead(), sequence: 3, "0800000100010300a0"),
        RequestCase(ImageManagement.StateWrite(confirm: true), sequence: 4, "0a00000a00010400a167636f6e6669726df5"),
        RequestCase(
            ImageManagement.StateWrite(hash: imageSHA, confirm: false),
            sequence: 5,
            "0a00003100010500a264686173685820fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d915110867636f6e6669726df4"
        ),
        RequestCase(ImageManagement.Erase(slot: 1), sequence: 8, "0a00000700010805a164736c6f7401"),
        RequestCase(ImageManagement.Erase(), "0a00000100010005a0"),
        RequestCase(ImageManagement.SlotInfo(), "0800000100010006a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func frugalStateListReadsAbsentFlagsAsFalse() throws {
        let response = try GroupTesting.response(
            to: ImageManagement.StateRead.self,
            [
                "images": [
                    ["slot": 0, "version": "1.0.0", "active": true, "confirmed": true],
                    ["slot": 1, "version": "2.0.0.3", "pending": true],
                ]
            ]
        )
        #expect(response.splitStatus == nil)
        let primary = try #require(response.images.first)
        #expect(
            primary.isActive && primary.isConfirmed && !primary.isPending && !primary.isBootable && !primary.isPermanent
        )
        #expect(primary.hash == nil && primary.image == nil && primary.imageNumber == 0)
        let secondary = try #require(response.images.last)
        #expect(secondary.isPending && secondary.active == nil && secondary.version == "2.0.0.3")
        #expect(primary.flagNames == ["active", "confirmed"])
        #expect(secondary.flagNames == ["pending"])
        let every = ImageManagement.SlotState(
            image: 1,
            slot: 1,
            version: "1.0.0",
            hash: nil,
            bootable: true,
            pending: true,
            confirmed: true,
            active: true,
            permanent: true
        )
        #expect(every.flagNames == ["active", "confirmed", "pending", "permanent", "bootable"])
    }

    @Test func stateWriteAnswersWithTheStateList() throws {
        let state = try GroupTesting.response(
            to: ImageManagement.StateWrite.self,
            [
                "images": [
                    [
                        "image": 1, "slot": 1, "version": "1.0.0", "hash": .byteString(Data(repeating: 7, count: 32)),
                        "pending": true, "permanent": true,
                    ]
                ], "splitStatus": 0,
            ]
        )
        #expect(state.images.first?.isPermanent == true && state.images.first?.imageNumber == 1)
        #expect(state.splitStatus == 0)
    }

    /// Only a confirm naming a hash changes meaning when sent again (after a revert it would
    /// mark the reverted image permanent); a test, or a confirm of what runs, does not.
    @Test(arguments: [
        (ImageManagement.StateWrite(hash: Data(repeating: 1, count: 32), confirm: true), false),
        (ImageManagement.StateWrite(hash: Data(repeating: 1, count: 32), confirm: false), true),
        (ImageManagement.StateWrite(hash: Data(repeating: 1, count: 32)), true),
        (ImageManagement.StateWrite(confirm: true), true),
    ])
    func stateWriteIsIdempotentUnlessItConfirmsAHash(_ request: ImageManagement.StateWrite, idempotent: Bool) {
        #expect(request.isIdempotent == idempotent)
    }

    @Test func uploadResponseCarriesOffsetAndOptionalMatch() throws {
        let middle = try GroupTesting.response(to: ImageManagement.Upload.self, ["off": 32])
        #expect(middle == .init(offset: 32))
        let legacy = try GroupTesting.response(to: ImageManagement.Upload.self, ["rc": 0, "off": 64, "match": true])
        #expect(legacy.match == true && legacy.offset == 64)
        #expect(throws: SMPError(.invalidResponse)) {
            try GroupTesting.response(to: ImageManagement.Upload.self, ["match": true])
        }
    }

    @Test func slotInfoDecodesOptionalFields() throws {
        let info = try GroupTesting.response(
            to: ImageManagement.SlotInfo.self,
            [
                "images": [
                    [
                        "image": 0,
                        "slots": [["slot": 0, "size": 4096], ["slot": 1, "size": 4096, "upload_image_id": 1]],
                        "max_image_size": 4000,
                    ]
                ]
            ]
        )
        let image = try #require(info.images.first)
        #expect(image.maxImageSize == 4000)
        #expect(image.slots.map(\.uploadImageID) == [nil, 1])
    }

    @Test func groupErrorsNameTheImageCode() throws {
        let full = try #require(
            try GroupTesting.deviceError(ImageManagement.Upload.self, ["err": ["group": 1, "rc": 9]])
        )
        #expect(full.codeName == "NO_FREE_SLOT" && full.matches(ImageManagement.ReturnCode.noFreeSlot))
        #expect(!full.matches(ImageManagement.ReturnCode.invalidSlot))
        let newest = try #require(
            try GroupTesting.deviceError(ImageManagement.StateWrite.self, ["err": ["group": 1, "rc": 34]])
        )
        #expect(newest.codeName == "ACTIVE_SLOT_NOT_KNOWN")
        let v1 = try #require(
            try GroupTesting.deviceError(ImageManagement.Upload.self, ["rc": 3, "rsn": "img too large"])
        )
        #expect(v1.codeName == "EINVAL" && v1.reason == "img too large")
    }

    @Test(arguments: [
        ReturnCodeCase(ImageManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(ImageManagement.ReturnCode.unknown, 1, "UNKNOWN"),
        ReturnCodeCase(ImageManagement.ReturnCode.flashConfigQueryFail, 2, "FLASH_CONFIG_QUERY_FAIL"),
        ReturnCodeCase(ImageManagement.ReturnCode.noImage, 3, "NO_IMAGE"),
        ReturnCodeCase(ImageManagement.ReturnCode.noTLVs, 4, "NO_TLVS"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidTLV, 5, "INVALID_TLV"),
        ReturnCodeCase(ImageManagement.ReturnCode.tlvMultipleHashesFound, 6, "TLV_MULTIPLE_HASHES_FOUND"),
        ReturnCodeCase(ImageManagement.ReturnCode.tlvInvalidSize, 7, "TLV_INVALID_SIZE"),
        ReturnCodeCase(ImageManagement.ReturnCode.hashNotFound, 8, "HASH_NOT_FOUND"),
        ReturnCodeCase(ImageManagement.ReturnCode.noFreeSlot, 9, "NO_FREE_SLOT"),
        ReturnCodeCase(ImageManagement.ReturnCode.flashOpenFailed, 10, "FLASH_OPEN_FAILED"),
        ReturnCodeCase(ImageManagement.ReturnCode.flashReadFailed, 11, "FLASH_READ_FAILED"),
        ReturnCodeCase(ImageManagement.ReturnCode.flashWriteFailed, 12, "FLASH_WRITE_FAILED"),
        ReturnCodeCase(ImageManagement.ReturnCode.flashEraseFailed, 13, "FLASH_ERASE_FAILED"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidSlot, 14, "INVALID_SLOT"),
        ReturnCodeCase(ImageManagement.ReturnCode.noFreeMemory, 15, "NO_FREE_MEMORY"),
        ReturnCodeCase(ImageManagement.ReturnCode.flashContextAlreadySet, 16, "FLASH_CONTEXT_ALREADY_SET"),
        ReturnCodeCase(ImageManagement.ReturnCode.flashContextNotSet, 17, "FLASH_CONTEXT_NOT_SET"),
        ReturnCodeCase(ImageManagement.ReturnCode.flashAreaDeviceNull, 18, "FLASH_AREA_DEVICE_NULL"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidPageOffset, 19, "INVALID_PAGE_OFFSET"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidOffset, 20, "INVALID_OFFSET"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidLength, 21, "INVALID_LENGTH"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidImageHeader, 22, "INVALID_IMAGE_HEADER"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidImageHeaderMagic, 23, "INVALID_IMAGE_HEADER_MAGIC"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidHash, 24, "INVALID_HASH"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidFlashAddress, 25, "INVALID_FLASH_ADDRESS"),
        ReturnCodeCase(ImageManagement.ReturnCode.versionGetFailed, 26, "VERSION_GET_FAILED"),
        ReturnCodeCase(ImageManagement.ReturnCode.currentVersionIsNewer, 27, "CURRENT_VERSION_IS_NEWER"),
        ReturnCodeCase(ImageManagement.ReturnCode.imageAlreadyPending, 28, "IMAGE_ALREADY_PENDING"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidImageVectorTable, 29, "INVALID_IMAGE_VECTOR_TABLE"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidImageTooLarge, 30, "INVALID_IMAGE_TOO_LARGE"),
        ReturnCodeCase(ImageManagement.ReturnCode.invalidImageDataOverrun, 31, "INVALID_IMAGE_DATA_OVERRUN"),
        ReturnCodeCase(ImageManagement.ReturnCode.imageConfirmationDenied, 32, "IMAGE_CONFIRMATION_DENIED"),
        ReturnCodeCase(
            ImageManagement.ReturnCode.imageSettingTestToActiveDenied,
            33,
            "IMAGE_SETTING_TEST_TO_ACTIVE_DENIED"
        ),
        ReturnCodeCase(ImageManagement.ReturnCode.activeSlotNotKnown, 34, "ACTIVE_SLOT_NOT_KNOWN"),
    ])
    func returnCodesFollowTheSpecTable(_ example: ReturnCodeCase<ImageManagement>) {
        example.verify()
        #expect(ImageManagement.returnCodeNames.count == 35)
    }
}
