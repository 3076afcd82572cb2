import Foundation
import MCUboot
import SMPTestSupport
import Testing

@Suite struct ImagePublicKeyTests {
    @Test func readsTheCommittedPublicKeys() throws {
        let p256 = try ImagePublicKey(keyFile: Fixture.data("ecdsa_p256.pub.pem"))
        #expect(p256.algorithm == .ecdsaP256)
        #expect(p256.subjectPublicKeyInfo.count == 91)
        #expect(!p256.isFromPrivateKey)
        let ed = try ImagePublicKey(keyFile: Fixture.data("ed25519.pub.pem"))
        #expect(ed.algorithm == .ed25519)
        #expect(ed.subjectPublicKeyInfo.count == 44)
        #expect(ed.encodedKey == ed.subjectPublicKeyInfo)
    }

    @Test func derAndPEMGiveTheSameKey() throws {
        let pem = try ImagePublicKey(keyFile: Fixture.data("ecdsa_p256.pub.pem"))
        let der = try ImagePublicKey(der: pem.subjectPublicKeyInfo)
        #expect(der.subjectPublicKeyInfo == pem.subjectPublicKeyInfo)
        let fromFile = try ImagePublicKey(keyFile: Data(pem.subjectPublicKeyInfo))
        #expect(fromFile.algorithm == .ecdsaP256)
    }

    @Test func keyHashOfTheFixtureKeyIsTheImagesKEYHASH() throws {
        let key = try ImagePublicKey(keyFile: Fixture.data("ecdsa_p256.pub.pem"))
        let image = try Fixture.image("ecdsa_p256_protected.bin")
        #expect(image.tlv(.keyHash)?.value == key.keyHash(.sha256))
        let ed = try ImagePublicKey(keyFile: Fixture.data("ed25519.pub.pem"))
        // Pure Ed25519 images hash the key with SHA-512, like the image.
        #expect(try Fixture.image("ed25519_pure.bin").tlv(.keyHash)?.value == ed.keyHash(.sha512))
    }

    @Test(arguments: [
        ("", MCUbootError.Code.invalidKey),
        ("hello", .invalidKey),
        ("-----BEGIN PUBLIC KEY-----\n!!!!\n-----END PUBLIC KEY-----\n", .invalidKey),
        ("-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n", .invalidKey),
        ("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n", .invalidKey),
        ("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", .invalidKey),
        ("-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n", .invalidKey),
    ])
    func malformedKeysGiveSpecificErrors(text: String, code: MCUbootError.Code) {
        let error = #expect(throws: MCUbootError.self) { try ImagePublicKey(pem: text) }
        #expect(error?.code == code)
    }

    @Test func truncatedDERIsInvalid() throws {
        let key = try ImagePublicKey(keyFile: Fixture.data("ecdsa_p256.pub.pem"))
        #expect(throws: MCUbootError(.invalidKey)) {
            try ImagePublicKey(der: Array(key.subjectPublicKeyInfo.prefix(50)))
        }
        #expect(throws: MCUbootError(.invalidKey)) { try ImagePublicKey(der: []) }
    }

    /// Every key type imgtool makes, read from its private key file and from `getpub -e pem`, hashes
    /// to what `imgtool getpubhash` prints.
    @Test(
        Peers.needed("imgtool"),
        arguments: ["ecdsa-p256", "ecdsa-p384", "ed25519", "rsa-2048", "rsa-3072"]
    )
    func privateAndPublicKeyFilesMatchImgtool(type: String) async throws {
        let workspace = try ImgtoolWorkspace()
        let privateKey = try await workspace.keygen(type)
        let publicPEM = try await Peers.run("imgtool", ["getpub", "-k", privateKey.path, "-e", "pem"])
        let hash = try await Peers.run("imgtool", ["getpubhash", "-k", privateKey.path, "-e", "raw"])
        let fromPrivate = try ImagePublicKey(keyFile: Data(contentsOf: privateKey))
        let fromPublic = try ImagePublicKey(keyFile: publicPEM)
        #expect(fromPrivate.isFromPrivateKey && !fromPublic.isFromPrivateKey)
        #expect(fromPrivate.subjectPublicKeyInfo == fromPublic.subjectPublicKeyInfo)
        #expect(fromPrivate.keyHash(.sha256) == Array(hash))
        let names = [
            "ecdsa-p256": "ECDSA P-256", "ecdsa-p384": "ECDSA P-384", "ed25519": "Ed25519", "rsa-2048": "RSA-2048",
            "rsa-3072": "RSA-3072",
        ]
        #expect(fromPrivate.algorithm.description == names[type])
    }

    /// Keys MCUboot cannot use are refused as unsupported, not as garbage; encrypted keys are
    /// refused with a hint (made with the `cryptography` package imgtool depends on).
    @Test(Peers.needed("cryptography"))
    func unsupportedAndEncryptedKeysAreRefused() async throws {
        let script = """
            import sys
            from cryptography.hazmat.primitives import serialization as s
            from cryptography.hazmat.primitives.asymmetric import ec, rsa
            kind = sys.argv[1]
            if kind == "p521":
                key = ec.generate_private_key(ec.SECP521R1())
            else:
                key = rsa.generate_private_key(65537, 1024 if kind == "rsa1024" else 2048)
            enc = s.BestAvailableEncryption(b"secret") if kind == "encrypted" else s.NoEncryption()
            out = key.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, enc)
            if kind == "p521pub":
                out = key.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo)
            sys.stdout.write(out.decode())
            """
        for (kind, code) in [
            ("p521", MCUbootError.Code.unsupportedKey), ("rsa1024", .unsupportedKey), ("encrypted", .invalidKey),
        ] {
            let pem = try await Peers.python(script, [kind])
            let error = #expect(throws: MCUbootError.self, "\(kind)") { try ImagePublicKey(keyFile: pem) }
            #expect(error?.code == code, "\(kind): \(error.map { "\($0)" } ?? "")")
        }
    }

    @Test func signatureKindFollowsTheAlgorithm() {
        #expect(ImagePublicKey.Algorithm.ecdsaP256.signatureKind == .ecdsaSignature)
        #expect(ImagePublicKey.Algorithm.ecdsaP384.signatureKind == .ecdsaSignature)
        #expect(ImagePublicKey.Algorithm.ed25519.signatureKind == .ed25519)
        #expect(ImagePublicKey.Algorithm.rsa(bits: 2048).signatureKind == .rsa2048PSS)
        #expect(ImagePublicKey.Algorithm.rsa(bits: 3072).signatureKind == .rsa3072PSS)
    }
}
