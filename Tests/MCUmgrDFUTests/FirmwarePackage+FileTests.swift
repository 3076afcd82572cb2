import Foundation
import MCUboot
import MCUmgrDFU
import SMPSimulator
import SMPTestSupport
import Testing

/// `FirmwarePackage(contentsOf:)`: the file reading `MCUmgrDFU` adds to MCUboot's parser.
struct FirmwarePackageFileTests {
    static let image = Data(
        FactoryImage.make(version: ImageVersion(major: 1, minor: 2, revision: 3), payloadSize: 4000)
    )

    @Test func aFileIsReadAndParsedUnderItsName() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("app-\(UUID().uuidString).bin")
        try Self.image.write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let package = try FirmwarePackage(contentsOf: url)
        #expect(package.format == .image)
        #expect(package.images.first?.data == Self.image)
        #expect(package.images.first?.fileName == url.lastPathComponent)
    }

    @Test func anUnreadableFileIsReadFailed() {
        let url = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).zip")
        #expect(throws: MCUbootError(.readFailed)) { try FirmwarePackage(contentsOf: url) }
    }

    @Test("a pipe (a shell's <(…)) reports size 0 and is still read to its end")
    func aPipeIsRead() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("fifo-\(UUID().uuidString)")
        try RealIO.servePipe(Self.image, at: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let package = try FirmwarePackage(contentsOf: url)
        #expect(package.images.first?.data == Self.image)
    }
}
