import Foundation
import MCUboot
import SMPTestSupport
import Testing

/// Parsing against imgtool: the committed fixtures (no peers needed) and images imgtool makes
/// during the test. The fixtures were made by `Fixtures/make-fixtures.sh`:
///
///     imgtool create --align 4 --header-size 0x200 --slot-size 0x2000 --pad-header --version 1.2.3 app.bin unsigned.bin
///     imgtool create … --version 1.2.3+7 --key p256.pem --security-counter auto --dependencies "(1,1.0.0)" app.bin ecdsa_p256_protected.bin
///     imgtool create … --version 2.0.0 --key ed25519.pem --pure app.bin ed25519_pure.bin
///     imgtool create … --version 1.2.3 --key p256.pem --pad --confirm app.bin padded_confirmed.bin
///
/// with `app.bin` = bytes(range(256)) × 4; `expected.json` holds `imgtool dumpinfo -f json` and
/// the digest `imgtool verify` printed for each.
@Suite struct MCUbootImageTests {
    static let fixtures = ["unsigned.bin", "ecdsa_p256_protected.bin", "ed25519_pure.bin", "padded_confirmed.bin"]

    @Test(arguments: fixtures)
    func committedFixturesParseAsImgtoolDumpedThem(name: String) throws {
        let image = try Fixture.image(name)
        let expected = try Fixture.expected(name)
        let ours = DumpInfo(image, digest: expected.digest)
        #expect(ours == expected)
        #expect(image.verify().isHashValid)
        if let digest = expected.digest {
            #expect(image.hash.map { TestBytes.hex($0) } == digest)
            #expect(TestBytes.hex(image.computeHash()) == digest)
        }
    }

    @Test func protectedTLVsCarrySecurityCounterAndDependency() throws {
        let image = try Fixture.image("ecdsa_p256_protected.bin")
        #expect(image.header.protectedTLVSize == 0x1c)
        #expect(image.protectedTLVArea == 0x600..<0x61c)
        #expect(image.protectedTLVs.map(\.kind) == [.securityCounter, .dependency])
        #expect(image.protectedTLVs.allSatisfy(\.isProtected) && !image.tlvs.contains(where: \.isProtected))
        #expect(image.securityCounter == 0x0102_0003)
        #expect(
            image.dependencies == [
                ImageDependency(imageIndex: 1, minimumVersion: ImageVersion(major: 1, minor: 0, revision: 0))
            ]
        )
        #expect(image.hashedRange == 0..<0x61c)
        #expect(image.header.version.description == "1.2.3.7")
        #expect(image.tlv(.securityCounter)?.offset == 0x604)
    }

    @Test func pureEd25519UsesSHA512() throws {
        let image = try Fixture.image("ed25519_pure.bin")
        #expect(image.hashAlgorithm == .sha512)
        #expect(image.isPureSignature)
        #expect(image.hash?.count == 64)
    }

    @Test func keepsUnknownTLVs() throws {
        // Append a vendor TLV (0x00a5, 3 bytes) to the unprotected area and fix up its total.
        var bytes = Array(try Fixture.data("unsigned.bin"))
        bytes += [0xa5, 0x00, 0x03, 0x00, 0xde, 0xad, 0x01]
        bytes[0x602] += 7
        let image = try MCUbootImage(bytes: bytes)
        #expect(image.tlvs.map(\.kind) == [.sha256, ImageTLV.Kind(0xa5)])
        #expect(image.tlvs.last?.value == [0xde, 0xad, 0x01])
        let report = image.verify()
        #expect(report.isHashValid)
        #expect(report.notes.contains { $0.contains("vendor TLV 0xa5") })
    }

    /// Malformed inputs derived from `unsigned.bin` (header 0x200, payload 0x400, TLV area at 0x600
    /// `07 69 28 00 | 10 00 20 00 | hash`) and `ecdsa_p256_protected.bin`.
    static let malformed: [(String, String, @Sendable (inout [UInt8]) -> Void, MCUbootError.Code)] = [
        ("truncated header", "unsigned.bin", { $0 = Array($0.prefix(20)) }, .truncatedHeader),
        ("file shorter than ih_hdr_size", "unsigned.bin", { $0 = Array($0.prefix(0x100)) }, .truncatedHeader),
        ("bad magic", "unsigned.bin", { $0[3] = 0x00 }, .badMagic),
        ("erased flash", "unsigned.bin", { $0 = [UInt8](repeating: 0xff, count: 64) }, .badMagic),
        (
            "ih_hdr_size below 32", "unsigned.bin",
            {
                $0[8] = 0x10
                $0[9] = 0
            }, .invalidHeader
        ),
        ("payload past the end", "unsigned.bin", { $0 = Array($0.prefix(0x500)) }, .truncatedImage),
        ("no TLV area", "unsigned.bin", { $0 = Array($0.prefix(0x600)) }, .truncatedImage),
        ("ih_img_size past the end", "unsigned.bin", { $0[14] = 0x10 }, .truncatedImage),
        ("TLV info magic wrong", "unsigned.bin", { $0[0x600] = 0x00 }, .badTLVInfoMagic),
        ("TLV area total past the end", "unsigned.bin", { $0[0x603] = 0x01 }, .truncatedImage),
        (
            "TLV length past the end", "unsigned.bin",
            {
                $0[0x606] = 0xff
                $0[0x607] = 0xff
            }, .tlvOutOfBounds
        ),
        ("area total smaller than its TLVs", "unsigned.bin", { $0[0x602] = 0x24 }, .tlvAreaMismatch),
        (
            "area total with stray bytes", "unsigned.bin",
            {
                $0[0x602] = 0x2a
                $0 += [0, 0]
            }, .tlvAreaMismatch
        ),
        (
            "area total below its info", "unsigned.bin",
            {
                $0[0x602] = 0x02
                $0[0x603] = 0
            }, .tlvAreaMismatch
        ),
        ("protected size disagrees with area", "ecdsa_p256_protected.bin", { $0[10] = 0x20 }, .tlvAreaMismatch),
        ("protected area but size 0", "ecdsa_p256_protected.bin", { $0[10] = 0 }, .tlvAreaMismatch),
        ("protected size on unprotected image", "unsigned.bin", { $0[10] = 0x1c }, .badTLVInfoMagic),
        ("empty file", "unsigned.bin", { $0 = [] }, .truncatedHeader),
    ]

    @Test(arguments: malformed)
    func malformedImagesGiveSpecificErrors(
        label: String,
        fixture: String,
        mutate: @Sendable (inout [UInt8]) -> Void,
        code: MCUbootError.Code
    ) throws {
        var bytes = Array(try Fixture.data(fixture))
        mutate(&bytes)
        let error = #expect(throws: MCUbootError.self, "\(label)") { try MCUbootImage(bytes: bytes) }
        #expect(error?.code == code, "\(label): \(error.map { "\($0)" } ?? "no error")")
        #expect(error?.message.isEmpty == false)
    }

    @Test func everyTruncationOfAnImageFailsCleanly() throws {
        let bytes = Array(try Fixture.data("ecdsa_p256_protected.bin"))
        for length in 0..<bytes.count {
            #expect(throws: MCUbootError.self) { try MCUbootImage(bytes: Array(bytes.prefix(length))) }
        }
        #expect(throws: Never.self) { try MCUbootImage(bytes: bytes) }
    }

    @Test func randomCorruptionNeverCrashes() throws {
        let original = Array(try Fixture.data("ecdsa_p256_protected.bin"))
        var generator = TestBytes.SeededGenerator(seed: 0x4d43_5542)
        for _ in 0..<2000 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...4, using: &generator) {
                let index = Int.random(in: 0..<bytes.count, using: &generator)
                bytes[index] = UInt8.random(in: 0...255, using: &generator)
            }
            if let image = try? MCUbootImage(bytes: bytes) {
                _ = image.verify()
            }
        }
    }

    @Test func dataSlicesWithANonZeroStartParse() throws {
        let bytes = try Fixture.data("unsigned.bin")
        let slice = (Data([0, 0, 0]) + bytes).dropFirst(3)
        #expect(slice.startIndex == 3)
        let image = try MCUbootImage(slice)
        #expect(image.verify().isHashValid)
    }

    /// A 16 MiB image is parsed and hashed in place: the parsed image shares the caller's buffer
    /// (peak memory is measured in docs/MCUBOOT.md, never asserted here).
    @Test func a16MiBImageIsParsedWithoutCopyingIt() throws {
        let payloadSize = 16 * 1024 * 1024 - 0x200 - 0x28
        var header = ImageHeader(imageSize: UInt32(payloadSize), version: ImageVersion(major: 1, minor: 0, revision: 0))
        header.headerSize = 0x200
        var bytes = header.bytes + [UInt8](repeating: 0, count: 0x200 - 32)
        bytes.reserveCapacity(16 * 1024 * 1024)
        var generator = TestBytes.SeededGenerator(seed: 16)
        for _ in 0..<(payloadSize / 8) {
            withUnsafeBytes(of: generator.next()) { bytes += $0 }
        }
        let hash = ImageHashAlgorithm.sha256.hash(bytes)
        bytes += [0x07, 0x69, 0x28, 0x00, 0x10, 0x00, 0x20, 0x00] + hash
        let data = Data(bytes)
        #expect(data.count == 16 * 1024 * 1024)
        let image = try MCUbootImage(data)
        #expect(image.verify().isHashValid)
        let original = data.withUnsafeBytes { $0.baseAddress }
        #expect(image.data.withUnsafeBytes { $0.baseAddress } == original)
        let package = try FirmwarePackage(data: data, fileName: "big.bin")
        #expect(package.images.first?.data.withUnsafeBytes { $0.baseAddress } == original)
        #expect(package.images.first?.hash == hash)
    }

    // MARK: - imgtool as the oracle

    /// Each configuration of the acceptance list: the `imgtool create` arguments and the key type.
    static let imgtoolCases: [(String, [String], String?)] = [
        ("unsigned", ["--version", "1.2.3"], nil),
        ("ecdsa-p256", ["--version", "1.2.3+7"], "ecdsa-p256"),
        ("ecdsa-p384", ["--version", "1.2.3"], "ecdsa-p384"),
        ("ed25519", ["--version", "1.2.3"], "ed25519"),
        ("ed25519-pure", ["--version", "2.0.0", "--pure"], "ed25519"),
        ("rsa-2048", ["--version", "1.2.3"], "rsa-2048"),
        ("rsa-3072", ["--version", "3.1.4+15"], "rsa-3072"),
        ("sha384", ["--version", "1.2.3", "--sha", "384"], nil),
        (
            "protected", ["--version", "1.2.3", "--security-counter", "auto", "--dependencies", "(1,1.0.0)"],
            "ecdsa-p256"
        ),
        (
            "two-dependencies",
            ["--version", "4.5.6+1", "--security-counter", "42", "--dependencies", "(1,1.0.0),(2,2.3.4+5)"], "ed25519"
        ),
        ("pad-confirm", ["--version", "1.2.3", "--pad", "--confirm"], "ecdsa-p256"),
        ("pad-test", ["--version", "1.2.3", "--pad"], nil),
        ("full-public-key", ["--version", "1.2.3", "--public-key-format", "full"], "ed25519"),
        ("full-public-key-ecdsa", ["--version", "1.2.3", "--public-key-format", "full"], "ecdsa-p256"),
        ("build-number", ["--version", "0.0.1+4294967295"], nil),
        ("load-address", ["--version", "1.0.0", "--load-addr", "0x20000000"], nil),
        ("rom-fixed", ["--version", "1.0.0", "--rom-fixed", "0x10000"], nil),
        ("non-bootable", ["--version", "1.0.0", "--non-bootable"], nil),
    ]

    @Test(Peers.needed("imgtool"), arguments: imgtoolCases)
    func imagesMadeByImgtoolParseAsItDumpsThem(label: String, arguments: [String], keyType: String?) async throws {
        let workspace = try ImgtoolWorkspace()
        var keyArguments: [String] = []
        if let keyType { keyArguments = ["--key", try await workspace.keygen(keyType).path] }
        let data = try await workspace.create("\(label).bin", arguments + keyArguments)
        let expected = try await workspace.dumpinfo("\(label).bin")
        let image = try MCUbootImage(data)
        #expect(DumpInfo(image, digest: expected.digest) == expected, "\(label)")
        #expect(image.verify().isHashValid, "\(label)")
        if let digest = expected.digest {
            #expect(image.hash.map { TestBytes.hex($0) } == digest, "\(label)")
        }
    }
}
