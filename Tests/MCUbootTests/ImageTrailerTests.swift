import Foundation
import MCUboot
import Testing

@Suite struct ImageTrailerTests {
    @Test func padConfirmTrailerMatchesImgtool() throws {
        let image = try Fixture.image("padded_confirmed.bin")
        let expected = try Fixture.expected("padded_confirmed.bin")
        let trailer = try #require(image.trailer)
        #expect(trailer.magic == .good)
        #expect(trailer.maxAlign == 8)
        #expect(trailer.imageOK.map(Int.init) == expected.trailerImageOK)
        #expect(trailer.isConfirmed)
        #expect(trailer.copyDone == 0xff)
        #expect(trailer.swapInfo == 0xff)
        #expect(trailer.swapSize == 0xffff_ffff)
        #expect(trailer.paddingLength == image.data.count - image.imageLength)
        #expect(image.data.count == 0x2000)
    }

    @Test func unpaddedImagesHaveNoTrailer() throws {
        #expect(try Fixture.image("unsigned.bin").trailer == nil)
    }

    @Test func testRequestIsMagicWithoutImageOK() throws {
        var bytes = Array(try Fixture.data("padded_confirmed.bin"))
        let imageOKOffset = bytes.count - 16 - 8
        #expect(bytes[imageOKOffset] == 0x01)
        bytes[imageOKOffset] = 0xff
        let trailer = try #require(try MCUbootImage(bytes: bytes).trailer)
        #expect(trailer.requestsSwap && !trailer.isConfirmed)
    }

    @Test func erasedAndForeignPaddingIsReported() throws {
        var bytes = Array(try Fixture.data("unsigned.bin"))
        bytes += [UInt8](repeating: 0xff, count: 64)
        #expect(try MCUbootImage(bytes: bytes).trailer?.magic == .unset)
        bytes[bytes.count - 1] = 0x00
        #expect(try MCUbootImage(bytes: bytes).trailer?.magic == .bad)
        let short = Array(try Fixture.data("unsigned.bin")) + [0xff, 0xff]
        #expect(try MCUbootImage(bytes: short).trailer?.magic == .bad)
    }

    @Test func alignedMagicEncodesItsAlignment() throws {
        // BOOT_MAX_ALIGN 32: magic = u16 align + 14 fixed bytes; image_ok sits 32 bytes before
        // the 32-byte-aligned magic field.
        var bytes = Array(try Fixture.data("unsigned.bin"))
        var tail = [UInt8](repeating: 0xff, count: 256)
        tail.replaceSubrange((256 - 16)..., with: [32, 0] + ImageTrailer.bootMagicAlignedSuffix)
        tail[256 - 32 - 32] = 0x01
        bytes += tail
        let trailer = try #require(try MCUbootImage(bytes: bytes).trailer)
        #expect(trailer.maxAlign == 32)
        #expect(trailer.isConfirmed)
    }

    @Test(arguments: [(UInt8?.none, "n/a"), (0x01, "set"), (0xff, "unset"), (0x03, "0x3")])
    func describesFlags(value: UInt8?, text: String) {
        #expect(ImageTrailer.describeFlag(value) == text)
    }
}
