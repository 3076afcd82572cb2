import Foundation
import MCUmgrCommands
import SMPTestSupport
import Testing

/// `mcumgr image info`, run in-process on the MCUboot fixtures (see
/// Tests/MCUbootTests/Fixtures/make-fixtures.sh for how imgtool made them).
@Suite struct ImageInfoCommandTests {
    static func fixture(_ name: String) -> String {
        Peers.packageRoot.appendingPathComponent("Tests/MCUbootTests/Fixtures/\(name)").path
    }

    static func info(_ arguments: [String]) async -> (status: Int32, stdout: String, stderr: String) {
        await MCUmgrCommand.run(arguments: ["image", "info"] + arguments)
    }

    static func json(_ text: String) throws -> [String: Any] {
        let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
        return try #require(object as? [String: Any])
    }

    static func expectedDigest(_ name: String) throws -> String {
        let url = URL(fileURLWithPath: fixture("expected.json"))
        let all = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        return try #require((all[name] as? [String: Any])?["digest"] as? String)
    }

    @Test func showsWhatDumpinfoShowsPlusTheVerdict() async throws {
        let result = await Self.info([Self.fixture("ecdsa_p256_protected.bin")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty)
        let lines = result.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "ecdsa_p256_protected.bin: MCUboot image, 1716 bytes")
        #expect(lines.contains("version      1.2.3.7 (1.2.3+7)"))
        #expect(lines.contains("hash         \(try Self.expectedDigest("ecdsa_p256_protected.bin")) (SHA-256)"))
        #expect(
            lines.contains {
                $0.hasPrefix("header       magic 0x96f3b83d  load_addr 0x0  hdr_size 0x200  protected_tlv_size 0x1c")
            }
        )
        #expect(lines.contains("protected TLVs (offset 0x600, 0x1c bytes):"))
        #expect(lines.contains("  SEC_CNT (0x50)      4 bytes   03000201"))
        #expect(lines.contains { $0.hasPrefix("  ECDSASIG (0x22)") })
        #expect(lines.contains("hash check   ok"))
        #expect(lines.contains("signature    not checked (no public key given)"))
        #expect(
            lines.contains { $0.hasPrefix("bootloader   depends on the bootloader: hash ok; signature not checked") }
        )
        #expect(lines.contains("note         depends on image 1 ≥ 1.0.0"))
    }

    @Test func jsonUsesWireNamesAndLowercaseHex() async throws {
        let result = await Self.info([
            Self.fixture("ecdsa_p256_protected.bin"), "--key", Self.fixture("ecdsa_p256.pub.pem"), "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").count == 1)
        let document = try Self.json(result.stdout)
        #expect(document["format"] as? String == "image")
        #expect(document["key_checked"] as? Bool == true)
        let image = try #require((document["images"] as? [[String: Any]])?.first)
        #expect(image["image"] as? Int == 0)
        #expect(image["slot"] as? Int == 1)
        #expect(image["version"] as? String == "1.2.3.7")
        #expect(image["hash"] as? String == (try Self.expectedDigest("ecdsa_p256_protected.bin")))
        #expect(image["security_counter"] as? Int == 0x0102_0003)
        let tlvs = try #require(image["tlvs"] as? [[String: Any]])
        #expect(tlvs.map { $0["name"] as? String } == ["SEC_CNT", "DEPENDENCY", "SHA256", "KEYHASH", "ECDSASIG"])
        let verification = try #require(image["verification"] as? [String: Any])
        #expect(verification["hash"] as? String == "ok")
        #expect(verification["signature"] as? String == "ok")
        #expect(verification["bootloader"] as? String == "accepted")
    }

    @Test func everyImageOfAPackageIsShown() async throws {
        let result = await Self.info(["--json", Self.fixture("dfu_application.zip")])
        #expect(result.status == 0, "\(result.stderr)")
        let document = try Self.json(result.stdout)
        #expect(document["format"] as? String == "zip")
        let images = try #require(document["images"] as? [[String: Any]])
        #expect(images.map { $0["image"] as? Int } == [0, 1])
        #expect(images.map { $0["slot"] as? Int } == [1, 1])
        #expect(images.map { $0["file"] as? String } == ["app update.bin", "net_core_app_update.bin"])
        #expect(images[1]["hash"] as? String == (try Self.expectedDigest("unsigned.bin")))

        let text = await Self.info([Self.fixture("dfu_application.zip")])
        #expect(text.stdout.hasPrefix("dfu_application.zip: firmware zip, 2 image(s)\n  name: fixture\n"))
        #expect(text.stdout.contains("  target       image 1, slot 1\n"))
    }

    @Test func showsSUITEnvelopes() async throws {
        let result = await Self.info([Self.fixture("rfc9124_example0.suit")])
        #expect(result.status == 0)
        #expect(
            result.stdout.contains(
                "digest       6658ea560262696dd1f13b782239a064da7c6c5cbaf52fded428a6fc83c7e5af (SHA-256)"
            )
        )
        #expect(result.stdout.contains("digest check ok"))
        let json = try Self.json(await Self.info([Self.fixture("rfc9124_example0.suit"), "--json"]).stdout)
        let image = try #require((json["images"] as? [[String: Any]])?.first)
        #expect(image["content"] as? String == "suit-envelope")
        #expect(image["hash"] as? String == "6658ea560262696dd1f13b782239a064da7c6c5cbaf52fded428a6fc83c7e5af")
    }

    /// README: with `--key`, an unsigned image is rejected (a bootloader that holds the key erases
    /// it), status 1; without a key it depends on the bootloader, status 0.
    @Test func anUnsignedImageAgainstAKeyIsARejectionWithExitStatusOne() async throws {
        let result = await Self.info([Self.fixture("unsigned.bin"), "--key", Self.fixture("ecdsa_p256.pub.pem")])
        #expect(result.status == 1, "\(result.stdout)")
        #expect(
            result.stdout.contains(
                "bootloader   rejected: unsigned, and a bootloader that holds this key requires its signature"
            ),
            "\(result.stdout)"
        )
        #expect(
            result.stderr
                == "error: unsigned.bin (image 0) would be rejected by MCUboot: unsigned, and a bootloader that "
                + "holds this key requires its signature\n"
        )
        let withoutKey = await Self.info([Self.fixture("unsigned.bin")])
        #expect(withoutKey.status == 0 && withoutKey.stdout.contains("depends on the bootloader"))
    }

    @Test func aWrongKeyIsARejectionWithExitStatusOne() async throws {
        let result = await Self.info([
            Self.fixture("ecdsa_p256_protected.bin"), "--key", Self.fixture("ed25519.pub.pem"),
        ])
        #expect(result.status == 1)
        #expect(result.stdout.contains("signature    wrong key"))
        let errorLines = result.stderr.split(separator: "\n")
        #expect(errorLines.count == 1)
        #expect(
            errorLines.first?.contains(
                "ecdsa_p256_protected.bin (image 0) would be rejected by MCUboot: signed with another key"
            ) == true
        )
    }

    @Test func problemsAreOneLineOnStderr() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("info-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let truncated = directory.appendingPathComponent("truncated.bin")
        try Data(try Data(contentsOf: URL(fileURLWithPath: Self.fixture("unsigned.bin"))).prefix(0x500)).write(
            to: truncated
        )
        let short = directory.appendingPathComponent("short.bin")
        try Data(try Data(contentsOf: URL(fileURLWithPath: Self.fixture("unsigned.bin"))).prefix(20)).write(to: short)
        let notAKey = directory.appendingPathComponent("key.pem")
        try Data("hello".utf8).write(to: notAKey)

        let empty = directory.appendingPathComponent("empty.bin")
        try Data().write(to: empty)

        let cases: [([String], Int32, String)] = [
            (
                [directory.appendingPathComponent("missing.bin").path], 66,
                "error: cannot read \(directory.path)/missing.bin: No such file or directory"
            ),
            ([directory.path], 66, "error: \(directory.path) is a folder, not a file"),
            ([empty.path], 65, "error: empty.bin: empty file"),
            (
                [truncated.path], 65,
                "error: truncated.bin: truncated: the payload ends at 0x600 (ih_hdr_size + ih_img_size) but the file "
                    + "has 0x500 bytes"
            ),
            ([short.path], 65, "error: short.bin: truncated: 20 bytes, an image header needs 32"),
            ([Self.fixture("unsigned.bin"), "--key", notAKey.path], 65, "error: --key \(notAKey.path)"),
            (
                [Self.fixture("unsigned.bin"), "--key", directory.appendingPathComponent("nokey.pem").path], 66,
                "error: cannot read \(directory.path)/nokey.pem: No such file or directory"
            ),
        ]
        for (arguments, status, message) in cases {
            let result = await Self.info(arguments)
            #expect(result.status == status, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty, "\(arguments)")
            CLI.expectOneErrorLine(result, "\(arguments)")
            #expect(result.stderr.hasPrefix(message), "\(arguments): \(result.stderr)")
        }
    }

    /// The private key file `imgtool keygen` writes is accepted as --key.
    @Test(Peers.needed("imgtool"))
    func acceptsTheImgtoolPrivateKeyFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("info-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let key = directory.appendingPathComponent("rsa.pem").path
        let image = directory.appendingPathComponent("signed.bin").path
        let payload = directory.appendingPathComponent("app.bin")
        try Data((0..<2048).map { UInt8(truncatingIfNeeded: $0) }).write(to: payload)
        _ = try await Peers.run("imgtool", ["keygen", "-k", key, "-t", "rsa-2048"])
        _ = try await Peers.run(
            "imgtool",
            [
                "sign", "--align", "4", "--header-size", "0x200", "--slot-size", "0x10000", "--pad-header", "--version",
                "3.2.1+9", "--key", key, payload.path, image,
            ]
        )
        let result = await Self.info([image, "--key", key, "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let document = try Self.json(result.stdout)
        let first = try #require((document["images"] as? [[String: Any]])?.first)
        #expect(first["version"] as? String == "3.2.1.9")
        #expect((first["verification"] as? [String: Any])?["signature"] as? String == "ok")
    }
}
