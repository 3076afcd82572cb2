import Foundation
import MCUboot
import MCUmgrCommands
import SMPPOSIX
import SMPSimulator
import Testing

/// `mcumgr fs …` against the simulated device.
@Suite struct FSCommandTests {
    /// Bytes with a pattern, larger than several device buffers.
    static let contents = Data((0..<20_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 7) })

    @Test func uploadStatusHashDownloadRoundTrip() async throws {
        let device = SimDevice(options: "buf_size=512")
        let local = device.scratch("in.bin")
        try Self.contents.write(to: URL(fileURLWithPath: local))

        let upload = await CLI.sim("fs", "upload", local, "/lfs1/data.bin", device: device)
        #expect(upload.status == 0, "\(upload.stderr)")
        #expect(upload.stdout.hasPrefix("uploaded \(local) to /lfs1/data.bin: 19.5 KiB in "))
        let progress = CLI.lines(upload.stderr)
        #expect(progress.first?.hasPrefix("upload  ") == true)
        #expect(progress.last?.hasPrefix("upload  100%  19.5 KiB/19.5 KiB") == true)
        #expect(progress.count <= 11)

        let status = await CLI.sim("fs", "status", "/lfs1/data.bin", device: device)
        #expect(status.stdout == "/lfs1/data.bin: 20000 bytes\n")

        let crc = await CLI.sim("fs", "hash", "/lfs1/data.bin", "--json", device: device)
        #expect(crc.status == 0, "\(crc.stderr)")
        let checksum = try CLI.json(crc.stdout)
        #expect(checksum["type"] as? String == "crc32")
        #expect(checksum["len"] as? Int == 20_000)

        let out = device.scratch("out.bin")
        let download = await CLI.sim("fs", "download", "/lfs1/data.bin", out, "--window", "3", device: device)
        #expect(download.status == 0, "\(download.stderr)")
        #expect(download.stdout.hasPrefix("downloaded /lfs1/data.bin to \(out): 19.5 KiB in "))
        #expect(CLI.lines(download.stderr).last?.hasPrefix("download  100%  19.5 KiB/19.5 KiB") == true)
        #expect(try Data(contentsOf: URL(fileURLWithPath: out)) == Self.contents)

        let json = await CLI.sim("fs", "download", "/lfs1/data.bin", out, "--json", device: device)
        let events = try CLI.jsonLines(json.stdout)
        #expect(events.last?["event"] as? String == "done")
        #expect(events.last?["sha256"] as? String == Self.hex(ImageHashAlgorithm.sha256.hash(Array(Self.contents))))
        #expect(json.stderr == "")
    }

    /// Lower-case hex, as the CLI prints digests.
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    @Test func crc32IsShownAsHex() async throws {
        let device = SimDevice()
        let local = device.scratch("small.txt")
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: local))
        _ = await CLI.sim("fs", "upload", local, "/lfs1/hello.txt", device: device)
        let crc = await CLI.sim("fs", "hash", "/lfs1/hello.txt", device: device)
        #expect(crc.status == 0, "\(crc.stderr)")
        // zlib crc32("hello\n") = 0x363a3020
        #expect(crc.stdout == "crc32 0x363a3020  /lfs1/hello.txt (6 bytes)\n")
    }

    @Test func anEmptyFileDownloads() async throws {
        let device = SimDevice()
        let empty = device.scratch("empty")
        try Data().write(to: URL(fileURLWithPath: empty))
        let upload = await CLI.sim("fs", "upload", empty, "/lfs1/empty", device: device)
        #expect(upload.status == 0, "\(upload.stderr)")
        let out = device.scratch("empty-out")
        let download = await CLI.sim("fs", "download", "/lfs1/empty", out, device: device)
        #expect(download.status == 0, "\(download.stderr)")
        #expect(try LocalFile.read(URL(fileURLWithPath: out)).isEmpty)
    }

    /// The device says only MOUNT_POINT_NOT_FOUND; the line says what that means and names the
    /// mount point Zephyr's samples and the simulator use.
    @Test func aPathOutsideEveryMountPointNamesTheKnownOne() async throws {
        let scratch = Scratch()
        let local = try scratch.file("hello.txt", Data("hello".utf8))
        let result = await CLI.sim("fs", "upload", local, "/data/hello.txt")
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "error: the device refused: fs error 14 MOUNT_POINT_NOT_FOUND: no file system is mounted where "
                + "the path begins; a device path starts with its mount point, e.g. /lfs1 (Zephyr's LittleFS "
                + "samples, and the simulator)\n"
        )
    }

    @Test func aMissingFileIsRefusedByName() async {
        let result = await CLI.sim("fs", "download", "/lfs1/nope", "/tmp/never-written")
        #expect(result.status == 1)
        #expect(result.stdout == "")
        #expect(result.stderr == "error: the device refused: fs error 3 FILE_NOT_FOUND\n")
        #expect(!FileManager.default.fileExists(atPath: "/tmp/never-written"))
        let status = await CLI.sim("fs", "status", "/lfs1/nope")
        #expect(status.stderr == "error: the device refused: fs error 3 FILE_NOT_FOUND\n")
    }

    @Test("a download that cannot be written is refused before the transfer, in the system's words")
    func anUnwritableDestinationSaysWhy() async throws {
        let device = SimDevice()
        let local = device.scratch("small")
        try Data("abc".utf8).write(to: URL(fileURLWithPath: local))
        #expect(await CLI.sim("fs", "upload", local, "/lfs1/small", device: device).status == 0)
        let result = await CLI.sim("fs", "download", "/lfs1/small", "/nonexistent/folder/out", device: device)
        #expect(result.status == 1)
        #expect(result.stderr == "error: cannot write /nonexistent/folder/out: No such file or directory\n")
        let folder = device.scratch("folder")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let onAFolder = await CLI.sim("fs", "download", "/lfs1/small", folder, device: device)
        #expect(onAFolder.status == 1)
        #expect(onAFolder.stderr == "error: cannot write \(folder): it is a folder, not a file\n")
    }

    @Test func aMissingLocalFileIsNamed() async {
        let result = await CLI.sim("fs", "upload", "/nonexistent/file", "/lfs1/x")
        #expect(result.status == 66)
        #expect(result.stderr.hasPrefix("error: cannot read /nonexistent/file: "))
    }

    /// The default device is the observed Zephyr build: crc32 only.
    @Test func typesAndClose() async throws {
        let types = await CLI.sim("fs", "types")
        #expect(types.status == 0, "\(types.stderr)")
        #expect(types.stdout == "type   format  size\ncrc32  number     4\n")
        let json = try CLI.json(await CLI.sim("fs", "types", "--json").stdout)
        #expect((json["types"] as? [String: Any])?.keys.sorted() == ["crc32"])
        #expect(((json["types"] as? [String: Any])?["crc32"] as? [String: Any])?["size"] as? Int == 4)
        let close = await CLI.sim("fs", "close")
        #expect(close.stdout == "closed\n")
    }

    @Test func sha256IsRefusedByNameWhereItIsNotBuiltIn() async throws {
        let device = SimDevice()
        let local = device.scratch("small.txt")
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: local))
        _ = await CLI.sim("fs", "upload", local, "/lfs1/hello.txt", device: device)
        let sha = await CLI.sim("fs", "hash", "/lfs1/hello.txt", "--type", "sha256", device: device)
        #expect(sha.status == 1)
        #expect(sha.stdout == "")
        #expect(sha.stderr == "error: the device refused: fs error 13 CHECKSUM_HASH_NOT_FOUND\n")
    }

    /// A device built with `CONFIG_MCUMGR_GRP_FS_HASH_SHA256` (sim:// has no option for it), served
    /// over UDP on 127.0.0.1.
    @Test func sha256WhereItIsBuiltIn() async throws {
        let device = SimulatedDevice(configuration: .init(fileHashSHA256: true))
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        do {
            try await Self.hashWithSHA256(conn: "udp://127.0.0.1:\(server.localAddress.port)")
        } catch {
            await server.stop()
            throw error
        }
        await server.stop()
    }

    static func hashWithSHA256(conn: String) async throws {
        let scratch = SimDevice()
        let local = scratch.scratch("hello.txt")
        try Data("hello\n".utf8).write(to: URL(fileURLWithPath: local))
        let upload = await CLI.run(["fs", "upload", local, "/lfs1/hello.txt", "--conn", conn])
        #expect(upload.status == 0, "\(upload.stderr)")
        let types = await CLI.run(["fs", "types", "--conn", conn])
        #expect(types.stdout == "type    format  size\ncrc32   number     4\nsha256  bytes     32\n")
        let json = try CLI.json(await CLI.run(["fs", "types", "--json", "--conn", conn]).stdout)
        #expect(((json["types"] as? [String: Any])?["sha256"] as? [String: Any])?["size"] as? Int == 32)
        let sha = await CLI.run(["fs", "hash", "/lfs1/hello.txt", "--type", "sha256", "--json", "--conn", conn])
        #expect(sha.status == 0, "\(sha.stderr)")
        let digest = try CLI.json(sha.stdout)
        #expect(digest["type"] as? String == "sha256")
        #expect(digest["len"] as? Int == 6)
        #expect(digest["output"] as? String == hex(ImageHashAlgorithm.sha256.hash(Array("hello\n".utf8))))
    }
}
