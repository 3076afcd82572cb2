import Foundation
import MCUboot
import SMPTestSupport
import Testing

@Suite struct ImageVerificationTests {
    static func fixtureKey(_ name: String) throws -> ImagePublicKey {
        try ImagePublicKey(keyFile: Fixture.data(name))
    }

    @Test func signedFixturesVerifyWithTheirKeys() throws {
        let ecdsa = try Fixture.image("ecdsa_p256_protected.bin").verify(
            publicKey: Self.fixtureKey("ecdsa_p256.pub.pem")
        )
        #expect(ecdsa.hash == .valid)
        #expect(ecdsa.signature == .valid(.ecdsaSignature))
        guard case .accepted = ecdsa.verdict else {
            Issue.record("verdict \(ecdsa.verdict)")
            return
        }
        #expect(ecdsa.notes.contains("security counter 16908291"))
        #expect(ecdsa.notes.contains { $0.contains("depends on image 1 ≥ 1.0.0") })
        let pure = try Fixture.image("ed25519_pure.bin").verify(publicKey: Self.fixtureKey("ed25519.pub.pem"))
        #expect(pure.signature == .valid(.ed25519))
        #expect(pure.isSignatureValid && pure.isHashValid)
    }

    @Test func withoutAKeyTheSignatureIsNotChecked() throws {
        let report = try Fixture.image("ecdsa_p256_protected.bin").verify()
        #expect(report.hash == .valid)
        #expect(report.signature == .notChecked("no public key given"))
        guard case .depends = report.verdict else {
            Issue.record("verdict \(report.verdict)")
            return
        }
    }

    /// Without a key the bootloader's build decides; with one, the bootloader holding it checks
    /// signatures and erases an unsigned image.
    @Test func unsignedImagesDependOnTheBootloaderAndAreRejectedAgainstAKey() throws {
        let report = try Fixture.image("unsigned.bin").verify()
        #expect(report.signature == .unsigned)
        #expect(report.verdict.description.contains("MCUBOOT_SIGNATURE_TYPE_NONE"))
        let againstKey = try Fixture.image("unsigned.bin").verify(publicKey: Self.fixtureKey("ecdsa_p256.pub.pem"))
        #expect(againstKey.signature == .unsigned)
        #expect(
            againstKey.verdict == .rejected("unsigned, and a bootloader that holds this key requires its signature")
        )
    }

    @Test func anotherKeyIsAKeyMismatch() throws {
        let p256Image = try Fixture.image("ecdsa_p256_protected.bin")
        let wrongType = p256Image.verify(publicKey: try Self.fixtureKey("ed25519.pub.pem"))
        guard case .keyMismatch = wrongType.signature else {
            Issue.record("signature \(wrongType.signature)")
            return
        }
        #expect(wrongType.verdict.isRejected)
    }

    @Test func paddedConfirmedImageReportsItsTrailer() throws {
        let report = try Fixture.image("padded_confirmed.bin").verify(publicKey: Self.fixtureKey("ecdsa_p256.pub.pem"))
        #expect(report.isSignatureValid)
        #expect(report.notes.contains { $0.contains("permanent upgrade requested") })
    }

    /// A one-byte change anywhere in header, payload or protected TLVs is caught: either the image
    /// no longer parses, or the hash no longer matches (and the signature no longer verifies).
    @Test(arguments: ["ecdsa_p256_protected.bin", "ed25519_pure.bin"])
    func everyOneByteChangeInTheHashedRangeIsCaught(name: String) throws {
        let original = Array(try Fixture.data(name))
        let key = try Self.fixtureKey(name.hasPrefix("ecdsa") ? "ecdsa_p256.pub.pem" : "ed25519.pub.pem")
        let image = try MCUbootImage(bytes: original)
        var uncaught: [Int] = []
        for offset in image.hashedRange {
            var bytes = original
            bytes[offset] ^= 0x01
            guard let changed = try? MCUbootImage(bytes: bytes) else { continue }
            let report = changed.verify(publicKey: key)
            if report.isHashValid || report.isSignatureValid || !report.verdict.isRejected { uncaught.append(offset) }
        }
        #expect(uncaught.isEmpty, "undetected changes at \(uncaught.prefix(10))")
    }

    @Test func changedSignatureOrKeyHashIsCaught() throws {
        let original = Array(try Fixture.data("ecdsa_p256_protected.bin"))
        let image = try MCUbootImage(bytes: original)
        let key = try Self.fixtureKey("ecdsa_p256.pub.pem")
        let signature = try #require(image.tlv(.ecdsaSignature))
        var bytes = original
        bytes[signature.offset + 4 + 10] ^= 0x80
        let badSignature = try MCUbootImage(bytes: bytes).verify(publicKey: key)
        #expect(badSignature.isHashValid)
        guard case .invalid = badSignature.signature else {
            Issue.record("signature \(badSignature.signature)")
            return
        }
        #expect(badSignature.verdict.isRejected)
        let keyHash = try #require(image.tlv(.keyHash))
        bytes = original
        bytes[keyHash.offset + 4] ^= 0x01
        guard case .keyMismatch = try MCUbootImage(bytes: bytes).verify(publicKey: key).signature else {
            Issue.record("KEYHASH change not reported")
            return
        }
    }

    @Test func hashMismatchReportsBothDigests() throws {
        var bytes = Array(try Fixture.data("unsigned.bin"))
        bytes[0x300] ^= 0xff
        let report = try MCUbootImage(bytes: bytes).verify()
        guard case .mismatch(let expected, let computed) = report.hash else {
            Issue.record("hash \(report.hash)")
            return
        }
        #expect(expected != computed && computed.count == 32)
        #expect(report.verdict.isRejected)
    }

    @Test func missingHashIsRejected() throws {
        // Rewrite the SHA256 TLV's type to an unknown one.
        var bytes = Array(try Fixture.data("unsigned.bin"))
        bytes[0x604] = 0xa1
        let report = try MCUbootImage(bytes: bytes).verify()
        #expect(report.hash == .missing)
        #expect(report.verdict.isRejected)
    }

    // MARK: - imgtool as the oracle

    static let keyTypes: [(String, [String])] = [
        ("ecdsa-p256", []), ("ecdsa-p384", []), ("ed25519", []), ("ed25519", ["--pure"]), ("rsa-2048", []),
        ("rsa-3072", []), ("ecdsa-p256", ["--public-key-format", "full"]),
        ("ed25519", ["--public-key-format", "full"]), ("rsa-2048", ["--public-key-format", "full"]),
        ("ecdsa-p256", ["--security-counter", "auto", "--dependencies", "(1,1.0.0)"]),
        ("ed25519", ["--sha", "512"]), ("ecdsa-p256", ["--pad-sig"]), ("ecdsa-p384", ["--sha", "384"]),
    ]

    /// Our verdict agrees with `imgtool verify -k` for the right key, another key of the same type,
    /// and one-byte changes in header, payload, protected area and signature.
    @Test(Peers.needed("imgtool"), arguments: keyTypes)
    func signatureVerificationAgreesWithImgtool(type: String, extra: [String]) async throws {
        let workspace = try ImgtoolWorkspace()
        let key = try await workspace.keygen(type)
        let otherKey = workspace.path("other-\(type).pem")
        _ = try await Peers.run("imgtool", ["keygen", "-k", otherKey.path, "-t", type])
        let data = try await workspace.create("signed.bin", ["--version", "1.2.3+4", "--key", key.path] + extra)
        let ourKey = try ImagePublicKey(keyFile: Data(contentsOf: key))
        let ourOtherKey = try ImagePublicKey(keyFile: Data(contentsOf: otherKey))
        let image = try MCUbootImage(data)

        let good = try await workspace.verify("signed.bin", key: key)
        #expect(good.ok, "imgtool: \(good.output)")
        #expect(image.verify(publicKey: ourKey).isSignatureValid == good.ok)
        if extra.contains("full") {
            #expect(image.verify().signature == .validForEmbeddedKey(ourKey.algorithm.signatureKind))
        }
        let wrong = try await workspace.verify("signed.bin", key: otherKey)
        #expect(!wrong.ok)
        #expect(image.verify(publicKey: ourOtherKey).isSignatureValid == wrong.ok)

        let signatureOffset = try #require(image.tlvs.first { $0.kind.isSignature }).offset + 4 + 8
        let protectedOffset = image.protectedTLVArea.map { $0.lowerBound + 6 }
        for offset in [20, 0x200, 0x200 + 2049, image.hashedRange.upperBound - 1, signatureOffset]
            + [protectedOffset].compactMap({ $0 })
        {
            var bytes = Array(data)
            bytes[offset] ^= 0x04
            try workspace.write(Data(bytes), "changed.bin")
            let theirs = try await workspace.verify("changed.bin", key: key).ok
            let ours = (try? MCUbootImage(bytes: bytes))?.verify(publicKey: ourKey)
            #expect(!theirs, "imgtool accepted a change at \(offset)")
            #expect(ours?.isSignatureValid != true && ours?.verdict.isRejected != false, "change at \(offset)")
        }
    }

    /// Encrypted, compressed, RAM-load, ROM-fixed, non-bootable and custom-TLV images are explained,
    /// not rejected.
    @Test(Peers.needed("imgtool"))
    func featuresAreReportedInsteadOfFailing() async throws {
        let workspace = try ImgtoolWorkspace()
        let ed = try await workspace.keygen("ed25519")
        let p256 = try await workspace.keygen("ecdsa-p256")
        try await Peers.run("imgtool", ["getpub", "-k", p256.path, "-e", "pem"]).write(
            to: workspace.path("p256.pub.pem")
        )
        var random = TestBytes.SeededGenerator(seed: 7)
        try Data((0..<4096).map { $0 < 300 ? UInt8.random(in: 0...255, using: &random) : 0 }).write(
            to: workspace.path("sparse.bin")
        )

        let encrypted = try await MCUbootImage(
            workspace.create(
                "enc.bin",
                ["--version", "1.0.0", "--key", ed.path, "--encrypt", workspace.path("p256.pub.pem").path]
            )
        ).verify(publicKey: ImagePublicKey(keyFile: Data(contentsOf: ed)))
        #expect(!encrypted.verdict.isRejected)
        #expect(encrypted.notes.contains { $0.hasPrefix("encrypted (AES-128)") })
        guard case .notCheckable = encrypted.hash else {
            Issue.record("hash \(encrypted.hash)")
            return
        }

        let compressedImage = try await MCUbootImage(
            workspace.create(
                "comp.bin",
                ["--version", "1.0.0", "--key", p256.path, "--compression", "lzma2"],
                payload: "sparse.bin"
            )
        )
        let compressed = compressedImage.verify(publicKey: try ImagePublicKey(keyFile: Data(contentsOf: p256)))
        #expect(compressed.isSignatureValid)
        #expect(compressed.notes.contains { $0.hasPrefix("compressed (COMPRESSED_LZMA2") })
        #expect(compressedImage.protectedTLVs.map(\.kind).contains(.decompressedSHA))

        let cases: [([String], String)] = [
            (["--load-addr", "0x20000000"], "RAM load: copied to 0x20000000"),
            (["--rom-fixed", "0x10000"], "ROM fixed: runs only from flash address 0x10000"),
            (["--non-bootable"], "non-bootable"),
            (["--custom-tlv", "0xa0", "0x010203"], "vendor TLV 0xa0 (protected, 3 bytes)"),
        ]
        for (arguments, note) in cases {
            let report = try await MCUbootImage(workspace.create("f.bin", ["--version", "1.0.0"] + arguments)).verify()
            #expect(report.isHashValid, "\(arguments)")
            #expect(report.notes.contains { $0.hasPrefix(note) }, "\(arguments): \(report.notes)")
        }
    }
}
