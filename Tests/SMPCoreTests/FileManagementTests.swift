import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct FileManagementTests {
    @Test(arguments: [
        RequestCase(
            FileManagement.Download(offset: 0, name: "/lfs/a"),
            "0800001200080000a2636f666600646e616d65662f6c66732f61"
        ),
        RequestCase(
            FileManagement.Upload(offset: 0, data: Data("ab".utf8), name: "/lfs/a", length: 2),
            "0a00001f00080000a4636f6666006464617461426162646e616d65662f6c66732f61636c656e02"
        ),
        RequestCase(
            FileManagement.Hash(name: "/f", type: .crc32, offset: 1, length: 2),
            "0800001e00080002a4646e616d65622f666474797065656372633332636f666601636c656e02"
        ),
        RequestCase(FileManagement.SupportedHashTypes(), "0800000100080003a0"),
        RequestCase(FileManagement.Close(), "0a00000100080004a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func downloadLengthOnlyOnTheFirstChunk() throws {
        let first = try GroupTesting.response(
            to: FileManagement.Download.self,
            ["off": 0, "data": .byteString(Data([1])), "len": 9]
        )
        #expect(first.length == 9)
        let later = try GroupTesting.response(
            to: FileManagement.Download.self,
            ["off": 1, "data": .byteString(Data())]
        )
        #expect(later == .init(offset: 1, data: Data()))
        #expect(try GroupTesting.response(to: FileManagement.Status.self, ["len": 7]).length == 7)
        #expect(try GroupTesting.response(to: FileManagement.Upload.self, ["off": 7]).offset == 7)
    }

    @Test func hashOutputIsANumberOrBytes() throws {
        let crc = try GroupTesting.response(
            to: FileManagement.Hash.self,
            ["type": "crc32", "len": 9, "output": 3_421_780_262]
        )
        #expect(crc.output == .checksum(0xCBF4_3926) && crc.offset == nil && crc.type == .crc32)
        let digest = Data(repeating: 0xee, count: 32)
        let sha = try GroupTesting.response(
            to: FileManagement.Hash.self,
            ["type": "sha256", "off": 4, "len": 8, "output": .byteString(digest)]
        )
        #expect(
            sha.output == .digest(digest) && sha.offset == 4 && sha.type == FileManagement.HashType(rawValue: "sha256")
        )
        #expect(throws: SMPError(.invalidResponse)) {
            try GroupTesting.response(to: FileManagement.Hash.self, ["type": "crc32", "len": 9, "output": "text"])
        }
        let again = try CBORDecoder().decode(
            FileManagement.Hash.Response.self,
            from: try CBOREncoder().encodeToValue(sha)
        )
        #expect(again == sha)
    }

    @Test func supportedTypesKeepDeviceOrder() throws {
        let types = try GroupTesting.response(
            to: FileManagement.SupportedHashTypes.self,
            ["types": ["sha256": ["format": 1, "size": 32], "crc32": ["format": 0, "size": 4]]]
        )
        #expect(types.types.names == ["sha256", "crc32"])
        #expect(types.types["crc32"]?.format == FileManagement.SupportedHashTypes.TypeInfo.numericFormat)
    }

    @Test func offsetErrorCarriesTheFileLength() throws {
        let payload: CBOR = ["err": ["group": 8, "rc": 11], "len": 100]
        let error = try #require(try GroupTesting.deviceError(FileManagement.Upload.self, payload))
        #expect(
            error.codeName == "FILE_OFFSET_NOT_VALID" && error.matches(FileManagement.ReturnCode.fileOffsetNotValid)
        )
        #expect(payload["len"]?.uint64Value == 100)
    }

    @Test(arguments: [
        ReturnCodeCase(FileManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(FileManagement.ReturnCode.unknown, 1, "UNKNOWN"),
        ReturnCodeCase(FileManagement.ReturnCode.fileInvalidName, 2, "FILE_INVALID_NAME"),
        ReturnCodeCase(FileManagement.ReturnCode.fileNotFound, 3, "FILE_NOT_FOUND"),
        ReturnCodeCase(FileManagement.ReturnCode.fileIsDirectory, 4, "FILE_IS_DIRECTORY"),
        ReturnCodeCase(FileManagement.ReturnCode.fileOpenFailed, 5, "FILE_OPEN_FAILED"),
        ReturnCodeCase(FileManagement.ReturnCode.fileSeekFailed, 6, "FILE_SEEK_FAILED"),
        ReturnCodeCase(FileManagement.ReturnCode.fileReadFailed, 7, "FILE_READ_FAILED"),
        ReturnCodeCase(FileManagement.ReturnCode.fileTruncateFailed, 8, "FILE_TRUNCATE_FAILED"),
        ReturnCodeCase(FileManagement.ReturnCode.fileDeleteFailed, 9, "FILE_DELETE_FAILED"),
        ReturnCodeCase(FileManagement.ReturnCode.fileWriteFailed, 10, "FILE_WRITE_FAILED"),
        ReturnCodeCase(FileManagement.ReturnCode.fileOffsetNotValid, 11, "FILE_OFFSET_NOT_VALID"),
        ReturnCodeCase(FileManagement.ReturnCode.fileOffsetLargerThanFile, 12, "FILE_OFFSET_LARGER_THAN_FILE"),
        ReturnCodeCase(FileManagement.ReturnCode.checksumHashNotFound, 13, "CHECKSUM_HASH_NOT_FOUND"),
        ReturnCodeCase(FileManagement.ReturnCode.mountPointNotFound, 14, "MOUNT_POINT_NOT_FOUND"),
        ReturnCodeCase(FileManagement.ReturnCode.readOnlyFilesystem, 15, "READ_ONLY_FILESYSTEM"),
        ReturnCodeCase(FileManagement.ReturnCode.fileEmpty, 16, "FILE_EMPTY"),
        ReturnCodeCase(FileManagement.ReturnCode.fileCloseFailed, 17, "FILE_CLOSE_FAILED"),
    ])
    func returnCodesFollowTheSpecTable(_ example: ReturnCodeCase<FileManagement>) {
        example.verify()
        #expect(FileManagement.returnCodeNames.count == 18)
    }
}
