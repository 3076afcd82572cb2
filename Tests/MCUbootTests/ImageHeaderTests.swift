import Foundation
import MCUboot
import SMPTestSupport
import Testing

@Suite struct ImageHeaderTests {
    /// The first 32 bytes of peers.md §8's `unsigned_pattern.bin`.
    static let unsignedPatternHeader = TestBytes.hex(
        "3db8f396 00000000 0002 0000 00100000 00000000 01 02 0300 00000000 00000000"
    )

    @Test func parsesTheLittleEndianFieldsOfAnImgtoolHeader() throws {
        let header = try ImageHeader(parsing: Self.unsignedPatternHeader)
        #expect(header.magic == ImageHeader.magic)
        #expect(header.loadAddress == 0)
        #expect(header.headerSize == 0x200)
        #expect(header.protectedTLVSize == 0)
        #expect(header.imageSize == 0x1000)
        #expect(header.flags == [])
        #expect(header.version == ImageVersion(major: 1, minor: 2, revision: 3))
        #expect(header.tlvAreaOffset == 0x1200)
        #expect(header.hashedLength == 0x1200)
        #expect(header.isBootable)
    }

    @Test func roundTripsThroughBytes() throws {
        let header = ImageHeader(
            loadAddress: 0x2000_0000,
            headerSize: 0x400,
            protectedTLVSize: 0x1c,
            imageSize: 0x12345,
            flags: [.ramLoad, .nonBootable],
            version: ImageVersion(major: 9, minor: 8, revision: 0x0706, build: 0x0504_0302)
        )
        #expect(header.bytes.count == 32)
        #expect(Array(header.bytes[20..<28]) == [9, 8, 0x06, 0x07, 0x02, 0x03, 0x04, 0x05])
        #expect(try ImageHeader(parsing: header.bytes) == header)
        #expect(try ImageHeader(parsing: Self.unsignedPatternHeader).bytes == Self.unsignedPatternHeader)
    }

    @Test func acceptsTheLegacyMagic() throws {
        var bytes = Self.unsignedPatternHeader
        bytes[0] = 0x3c
        #expect(try ImageHeader(parsing: bytes).magic == ImageHeader.legacyMagic)
    }

    @Test(arguments: [
        (Array(unsignedPatternHeader.prefix(31)), MCUbootError.Code.truncatedHeader),
        ([], .truncatedHeader),
        ([0xff, 0xff, 0xff, 0xff] + Array(unsignedPatternHeader.dropFirst(4)), .badMagic),
        ([0x96, 0xf3, 0xb8, 0x3d] + Array(unsignedPatternHeader.dropFirst(4)), .badMagic),
        (
            Array(unsignedPatternHeader.prefix(8)) + [0x10, 0x00] + Array(unsignedPatternHeader.dropFirst(10)),
            .invalidHeader
        ),
    ])
    func rejectsMalformedHeaders(bytes: [UInt8], code: MCUbootError.Code) {
        #expect(throws: MCUbootError(code)) { try ImageHeader(parsing: bytes) }
    }

    @Test func namesFlagsAsImgtoolDoes() {
        let flags: ImageHeader.Flags = [.encryptedAES256, .ramLoad, .romFixed, .compressedLZMA2, .compressedARMThumb]
        #expect(
            flags.names == ["ENCRYPTED_AES256", "RAM_LOAD", "ROM_FIXED", "COMPRESSED_LZMA2", "COMPRESSED_ARM_THUMB"]
        )
        #expect(flags.isEncrypted && flags.isCompressed)
        #expect(ImageHeader.Flags(rawValue: 0x1_0000).names == ["0x10000"])
        #expect(ImageHeader.Flags().description == "0x0")
    }
}
