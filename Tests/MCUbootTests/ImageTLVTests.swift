import MCUboot
import Testing

@Suite struct ImageTLVTests {
    @Test(arguments: [
        (ImageTLV.Kind.keyHash, "KEYHASH"), (.publicKey, "PUBKEY"), (.sha256, "SHA256"), (.sha384, "SHA384"),
        (.sha512, "SHA512"), (.rsa2048PSS, "RSA2048"), (.ecdsaSignature, "ECDSASIG"), (.rsa3072PSS, "RSA3072"),
        (.ed25519, "ED25519"), (.signaturePure, "SIG_PURE"), (.encRSA2048, "ENCRSA2048"), (.encKW, "ENCKW"),
        (.encEC256, "ENCEC256"), (.encX25519, "ENCX25519"), (.encX25519SHA512, "ENCX25519_SHA512"),
        (.dependency, "DEPENDENCY"), (.securityCounter, "SEC_CNT"), (.bootRecord, "BOOT_RECORD"),
        (.decompressedSize, "DECOMP_SIZE"), (.decompressedSHA, "DECOMP_SHA"),
        (.decompressedSignature, "DECOMP_SIGNATURE"), (.compressedDecryptedSize, "COMP_DEC_SIZE"),
        (.vendorUUID, "UUID_VID"), (.classUUID, "UUID_CID"), (.ecdsa224, "ECDSA224"),
    ])
    func everyKnownTypeHasItsImgtoolName(kind: ImageTLV.Kind, name: String) {
        #expect(kind.name == name)
        #expect(kind.isKnown)
    }

    @Test func unknownTypesAreKeptAndDescribed() {
        let vendor = ImageTLV.Kind(0x00a5)
        #expect(vendor.name == "UNKNOWN")
        #expect(!vendor.isKnown)
        #expect(vendor.isVendorReserved)
        #expect(vendor.description == "UNKNOWN (0xa5)")
        #expect(!ImageTLV.Kind(0x0042).isVendorReserved)
        #expect(ImageTLV.Kind.sha256.description == "SHA256 (0x10)")
    }

    @Test func classifiesHashAndSignatureKinds() {
        #expect([ImageTLV.Kind.sha256, .sha384, .sha512].allSatisfy { $0.isImageHash })
        #expect([ImageTLV.Kind.rsa2048PSS, .rsa3072PSS, .ecdsaSignature, .ed25519].allSatisfy { $0.isSignature })
        #expect(!ImageTLV.Kind.keyHash.isImageHash && !ImageTLV.Kind.signaturePure.isSignature)
    }

    @Test func parsesDependencyValues() throws {
        // imgtool --dependencies "(1,1.0.0)" writes 01 00 00 00 01 00 00 00 00 00 00 00.
        let dependency = try #require(ImageDependency(tlvValue: [1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]))
        #expect(dependency.imageIndex == 1)
        #expect(dependency.minimumVersion == ImageVersion(major: 1, minor: 0, revision: 0))
        let other = try #require(ImageDependency(tlvValue: [0, 0, 0, 0, 2, 3, 0x04, 0x01, 7, 0, 0, 0]))
        #expect(other.minimumVersion == ImageVersion(major: 2, minor: 3, revision: 0x104, build: 7))
        #expect(ImageDependency(tlvValue: [1, 0, 0]) == nil)
    }
}
