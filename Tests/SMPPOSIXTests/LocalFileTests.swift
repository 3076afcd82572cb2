import Foundation
import SMPPOSIX
import SMPTestSupport
import Testing

/// Whole-file reads that avoid swift-foundation's empty-file leak keep Foundation's answers: the
/// bytes, nothing for an empty file, the system's reason for a missing one or a folder. (The leak
/// itself shows only under LeakSanitizer: scripts/sanitize.sh address is its regression run.)
@Suite struct LocalFileTests {
    static func scratch() throws -> URL {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("localfile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }

    @Test(arguments: [0, 1, 4096, 100_000], [false, true])
    func readsWhatIsThere(size: Int, mapped: Bool) throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("f.bin")
        let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try bytes.write(to: file)
        #expect(try LocalFile.read(file, mapped: mapped) == bytes)
    }

    @Test func missingAndFolderSayWhy() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let missing = folder.appendingPathComponent("nope.bin")
        #expect(throws: (any Error).self) { try LocalFile.read(missing) }
        do {
            _ = try LocalFile.read(missing)
        } catch {
            #expect(FileErrorReason.isMissing(error))
        }
        #expect(throws: (any Error).self) { try LocalFile.read(folder) }
    }

    @Test("a pipe is read to its end, beyond one read's worth", arguments: [0, 5, 300_000])
    func readsAPipe(size: Int) throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let pipe = folder.appendingPathComponent("pipe")
        let bytes = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try RealIO.servePipe(bytes, at: pipe)
        #expect(try LocalFile.read(pipe, mapped: true) == bytes)
    }

    @Test("a symbolic link to a file is followed; an error names its reason")
    func linksAndReasons() throws {
        let folder = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("f.bin")
        try Data([1, 2, 3]).write(to: file)
        let link = folder.appendingPathComponent("link")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        #expect(try LocalFile.read(link) == Data([1, 2, 3]))
        let empty = folder.appendingPathComponent("empty")
        try Data().write(to: empty)
        try FileManager.default.removeItem(at: link)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: empty)
        #expect(try LocalFile.read(link).isEmpty)

        #expect(throws: (any Error).self) { try LocalFile.read(folder) }
        do {
            _ = try LocalFile.read(folder)
        } catch {
            #expect(FileErrorReason.describe(error) == String(cString: strerror(EISDIR)))
        }
        do {
            _ = try LocalFile.read(folder.appendingPathComponent("nope"))
        } catch {
            #expect(FileErrorReason.describe(error) == String(cString: strerror(ENOENT)))
        }
    }
}
