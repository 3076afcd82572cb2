import Foundation
import MCUmgrCommands
import SMPPOSIX
import SMPSimulator
import Testing

/// `mcumgr suit …` against the simulated nRF54H-style SUIT device.
@Suite struct SUITCommandTests {
    static let envelopeDigest = "6658ea560262696dd1f13b782239a064da7c6c5cbaf52fded428a6fc83c7e5af"

    @Test func listAndState() async throws {
        let list = await CLI.sim("suit", "list")
        #expect(list.status == 0, "\(list.stderr)")
        #expect(list.stdout == "role 0x20 APP_ROOT\n")
        #expect(await CLI.sim("suit", "list", "--json").stdout == #"{"manifests":[{"role":32}]}"# + "\n")

        let state = await CLI.sim("suit", "state", "0x20")
        #expect(state.status == 0, "\(state.stderr)")
        let lines = CLI.lines(state.stdout)
        #expect(lines.first == "role 0x20 APP_ROOT")
        #expect(lines.contains("  digest_algorithm                  -16 (SHA-256)"))
        #expect(lines.contains("  semantic_version                  1.0.0"))
        let json = try CLI.json(await CLI.sim("suit", "state", "32", "--json").stdout)
        #expect(json["sequence_number"] as? Int == 1)
        #expect(json["class_id"] as? String == String(repeating: "c1", count: 16))
    }

    @Test func anUnknownRoleIsRefused() async {
        let result = await CLI.sim("suit", "state", "0x99")
        #expect(result.status == 1)
        #expect(result.stderr == "error: the device refused: device error 5 ENOENT (no such entry)\n")
    }

    @Test func missingAndCleanup() async {
        let missing = await CLI.sim("suit", "missing")
        #expect(missing.stdout == "the device is not waiting for an image\n")
        #expect(await CLI.sim("suit", "missing", "--json").stdout == "{}\n")
        let cleanup = await CLI.sim("suit", "cleanup")
        #expect(cleanup.stdout == "erased the DFU partition and caches\n")
    }

    @Test func anEnvelopeThatAsksForAnImageItDoesNotCarryFails() async {
        let result = await CLI.sim("suit", "upload", CLI.fixture("rfc9124_example0.suit"), "--wait", "0")
        #expect(result.status == 1)
        #expect(
            CLI.lines(result.stdout) == [
                "uploading rfc9124_example0.suit: SUIT envelope, 237 bytes, sequence 0",
                "digest \(Self.envelopeDigest)",
            ]
        )
        #expect(
            CLI.lines(result.stderr).last
                == "error: the device asks for file://app.bin, which rfc9124_example0.suit does not carry"
        )
    }

    /// A package of the example envelope and the 3000-byte `app.bin` it asks for.
    static func packageWithAResource(in device: SimDevice) throws -> String {
        let envelope = try Data(contentsOf: URL(fileURLWithPath: CLI.fixture("rfc9124_example0.suit")))
        var zip = TinyZip()
        zip.add("manifest.json", Array(#"{"files": [{"type": "suit-envelope", "file": "root.suit"}]}"#.utf8))
        zip.add("root.suit", Array(envelope))
        zip.add("app.bin", Array(repeating: 0xa5, count: 3000))
        let path = device.scratch("dfu_suit.zip")
        try Data(zip.bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aPackageServesTheImageTheDeviceAsksFor() async throws {
        let device = SimDevice()
        let path = try Self.packageWithAResource(in: device)

        // Nothing is lost here: a timeout a loaded machine cannot reach, so that the exact output
        // below holds (a late answer would add a resend, and after the last chunk the line of
        // aResourceTheDeviceNoLongerWaitsForEndsTheUploadCleanly).
        let result = await CLI.sim("suit", "upload", path, "--wait", "0", "--timeout", "20", device: device)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = CLI.lines(result.stdout)
        #expect(lines.contains("the device asks for file://app.bin: uploading 3000 bytes"))
        #expect(lines.last?.hasPrefix("uploaded in ") == true)
        #expect(CLI.lines(result.stderr).contains { $0.hasPrefix("app.bin  100%  2.9 KiB/2.9 KiB") })

        let json = await CLI.sim("suit", "upload", path, "--wait", "0", "--json", "--timeout", "20", device: device)
        #expect(json.status == 0, "\(json.stderr)")
        let events = try CLI.jsonLines(json.stdout)
        #expect(events.first?["event"] as? String == "start")
        #expect(events.last?["served"] as? [String] == ["file://app.bin"])
        #expect(Set(events.compactMap { $0["stage"] as? String }) == ["envelope", "app.bin"])
    }

    /// The answer to the resource's last chunk is lost: the chunk goes again, and the device —
    /// which had every byte and installed the envelope — refuses it with EBADSTATE. The command
    /// asks the device what it needs now (nothing) instead of failing an upgrade that worked.
    @Test func aResourceTheDeviceNoLongerWaitsForEndsTheUploadCleanly() async throws {
        let scratch = SimDevice()
        let path = try Self.packageWithAResource(in: scratch)
        // A run without faults counts the requests: the last chunk comes before the final poll.
        let counted = SimulatedDevice(configuration: .init())
        let first = try await Self.upload(path, to: counted, ["--timeout", "20"])
        #expect(first.status == 0, "\(first.stderr)")
        let requests = await counted.requestsHandled
        let device = SimulatedDevice(configuration: .init())
        await device.setFaults(Faults([.loseAnswer(toRequest: requests - 1)]))
        let result = try await Self.upload(path, to: device, ["--timeout", "5"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("the device no longer waits for file://app.bin (device error 6 EBADSTATE"))
        #expect(CLI.lines(result.stdout).last?.hasPrefix("uploaded in ") == true)
        withExtendedLifetime(scratch) {}  // the package's folder lives as long as the scratch
    }

    /// `suit upload PATH --wait 0` to a device served over UDP on loopback.
    static func upload(_ path: String, to device: SimulatedDevice, _ options: [String]) async throws -> CLI.Result {
        let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
        server.start()
        let conn = "udp://127.0.0.1:\(server.localAddress.port)"
        let result = await CLI.run(["suit", "upload", path, "--wait", "0", "--conn", conn] + options)
        await server.stop()
        return result
    }

    @Test func cachesAreUploadedBeforeTheDeferredEnvelopeIsProcessed() async throws {
        let device = SimDevice()
        let envelope = try Data(contentsOf: URL(fileURLWithPath: CLI.fixture("rfc9124_example0.suit")))
        var zip = TinyZip()
        zip.add(
            "manifest.json",
            Array(
                #"{"files": [{"type": "suit-envelope", "file": "root.suit"}, {"type": "cache", "partition": "2", "file": "cache2.bin"}]}"#
                    .utf8
            )
        )
        zip.add("root.suit", Array(envelope))
        zip.add("cache2.bin", Array(repeating: 0x3c, count: 5000))
        zip.add("app.bin", Array(repeating: 0xa5, count: 100))
        let path = device.scratch("dfu_suit_cache.zip")
        try Data(zip.bytes).write(to: URL(fileURLWithPath: path))

        let result = await CLI.sim("suit", "upload", path, "--wait", "0", device: device)
        #expect(result.status == 0, "\(result.stderr)")
        let lines = CLI.lines(result.stdout)
        #expect(lines.contains("uploading cache cache2.bin to partition 2"))
        #expect(lines.contains("the device asks for file://app.bin: uploading 100 bytes"))
        let stages = CLI.lines(result.stderr).compactMap { $0.split(separator: " ").first.map(String.init) }
        #expect(Array(Set(stages)).sorted() == ["app.bin", "cache", "envelope"])
    }

    @Test func deferStoresTheEnvelope() async {
        let result = await CLI.sim("suit", "upload", CLI.fixture("rfc9124_example0.suit"), "--defer")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(CLI.lines(result.stdout).last == "stored the envelope; start processing with 'mcumgr suit process'")
    }

    @Test func anMCUbootImageIsNotAnEnvelope() async {
        let result = await CLI.sim("suit", "upload", CLI.fixture("unsigned.bin"))
        #expect(result.status == 1)
        #expect(
            result.stderr
                == "error: unsigned.bin holds no SUIT envelope (image); use 'mcumgr image upload' for MCUboot images\n"
        )
    }
}

/// Writes a stored (uncompressed) zip archive.
struct TinyZip {
    private var body: [UInt8] = []
    private var central: [UInt8] = []
    private var count = 0

    mutating func add(_ path: String, _ data: [UInt8]) {
        let name = Array(path.utf8)
        let crc = Self.crc32(data)
        let offset = UInt32(body.count)
        body += Self.le32(0x0403_4b50) + Self.le16(20) + Self.le16(0) + Self.le16(0) + Self.le16(0) + Self.le16(0x21)
        body += Self.le32(crc) + Self.le32(UInt32(data.count)) + Self.le32(UInt32(data.count))
        body += Self.le16(UInt16(name.count)) + Self.le16(0) + name + data
        central += Self.le32(0x0201_4b50) + Self.le16(0x031e) + Self.le16(20) + Self.le16(0) + Self.le16(0)
        central += Self.le16(0) + Self.le16(0x21) + Self.le32(crc) + Self.le32(UInt32(data.count))
        central += Self.le32(UInt32(data.count)) + Self.le16(UInt16(name.count)) + Self.le16(0) + Self.le16(0)
        central += Self.le16(0) + Self.le16(0) + Self.le32(0o100644 << 16) + Self.le32(offset) + name
        count += 1
    }

    var bytes: [UInt8] {
        body + central + Self.le32(0x0605_4b50) + Self.le16(0) + Self.le16(0) + Self.le16(UInt16(count))
            + Self.le16(UInt16(count)) + Self.le32(UInt32(central.count)) + Self.le32(UInt32(body.count)) + Self.le16(0)
    }

    private static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xff), UInt8(value >> 8)] }
    private static func le32(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xedb8_8320 ^ (crc >> 1) : crc >> 1 }
    }
    private static func crc32(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(UInt32(0xffff_ffff)) { table[Int(($0 ^ UInt32($1)) & 0xff)] ^ ($0 >> 8) }
    }
}
