import MCUboot
import Testing

@Suite struct MCUbootErrorTests {
    static let codes: [MCUbootError.Code] = [
        .truncatedHeader, .badMagic, .invalidHeader, .truncatedImage, .badTLVInfoMagic, .tlvOutOfBounds,
        .tlvAreaMismatch, .hashNotFound, .unsupportedPackage, .invalidZip, .manifestMissing, .invalidManifest,
        .missingFile, .invalidSUITEnvelope, .suitDigestMissing, .invalidKey, .unsupportedKey, .readFailed,
    ]

    @Test func everyCodeIsDistinctAndNamed() {
        #expect(Set(Self.codes).count == Self.codes.count)
        #expect(Set(Self.codes.map(\.description)).count == Self.codes.count)
    }

    @Test func equalityComparesTheCodeOnly() {
        #expect(MCUbootError(.badMagic, "one") == MCUbootError(.badMagic, "two"))
        #expect(MCUbootError(.badMagic) != MCUbootError(.truncatedHeader))
        #expect(Set([MCUbootError(.badMagic, "a"), MCUbootError(.badMagic, "b")]).count == 1)
    }

    @Test func descriptionIsOneLineWithCodeMessageAndCause() {
        #expect(MCUbootError(.missingFile).description == "MCUboot: file missing from package")
        let error = MCUbootError(.invalidZip, "p.zip: no end record", cause: MCUbootError(.readFailed))
        #expect(error.description == "MCUboot: invalid zip archive: p.zip: no end record (MCUboot: read failed)")
        #expect(!error.description.contains("\n"))
    }
}
