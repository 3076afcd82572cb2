import Foundation
import MCUboot
import SMPTestSupport
import Testing

@Suite struct SUITEnvelopeTests {
    /// RFC 9124 Appendix B.1 (Example 0), rebuilt with cbor2 by `Fixtures/make-fixtures.sh`.
    @Test func readsTheRFCExampleDigest() throws {
        let envelope = try SUITEnvelope(Fixture.data("rfc9124_example0.suit"))
        #expect(TestBytes.hex(envelope.digest) == "6658ea560262696dd1f13b782239a064da7c6c5cbaf52fded428a6fc83c7e5af")
        #expect(envelope.digestAlgorithmID == -16)
        #expect(envelope.digestAlgorithmName == "SHA-256")
        #expect(envelope.isDigestValid == true)
        #expect(envelope.manifestVersion == 1)
        #expect(envelope.sequenceNumber == 0)
        #expect(envelope.signatureCount == 1)
    }

    @Test func handBuiltEnvelopesVerifyTheirDigest() throws {
        let good = TestCBOR.envelope(sequence: 300, payloads: [("#app", [1, 2, 3])])
        let envelope = try SUITEnvelope(Data(good.bytes))
        #expect(envelope.digest == good.digest)
        #expect(envelope.isDigestValid == true)
        #expect(envelope.sequenceNumber == 300)
        #expect(envelope.signatureCount == 0)
        #expect(envelope.integratedPayloads == ["#app"])
        let wrong = TestCBOR.envelope(sequence: 1, digest: [UInt8](repeating: 0xab, count: 32))
        #expect(try SUITEnvelope(Data(wrong.bytes)).isDigestValid == false)
    }

    static let manifest = TestCBOR.bytes(
        TestCBOR.map([(TestCBOR.int(1), TestCBOR.int(1)), (TestCBOR.int(2), TestCBOR.int(5))])
    )

    @Test(arguments: [
        ("not CBOR", [0xd8, 0x6b, 0xff], MCUbootError.Code.invalidSUITEnvelope),
        ("untagged map", TestCBOR.map([(TestCBOR.int(3), manifest)]), .invalidSUITEnvelope),
        ("wrong tag", TestCBOR.tag(18, TestCBOR.map([])), .invalidSUITEnvelope),
        ("tag around an array", TestCBOR.tag(107, TestCBOR.array([])), .invalidSUITEnvelope),
        ("envelope without digest", TestCBOR.tag(107, TestCBOR.map([(TestCBOR.int(3), manifest)])), .suitDigestMissing),
        (
            "empty authentication wrapper",
            TestCBOR.tag(
                107,
                TestCBOR.map([(TestCBOR.int(2), TestCBOR.bytes(TestCBOR.array([]))), (TestCBOR.int(3), manifest)])
            ),
            .suitDigestMissing
        ),
        (
            "wrapper whose first block is not a digest",
            TestCBOR.tag(
                107,
                TestCBOR.map([
                    (
                        TestCBOR.int(2),
                        TestCBOR.bytes(TestCBOR.array([TestCBOR.bytes(TestCBOR.array([TestCBOR.int(-16)]))]))
                    ),
                    (TestCBOR.int(3), manifest),
                ])
            ),
            .suitDigestMissing
        ),
        (
            "wrapper not a byte string",
            TestCBOR.tag(107, TestCBOR.map([(TestCBOR.int(2), TestCBOR.array([])), (TestCBOR.int(3), manifest)])),
            .invalidSUITEnvelope
        ),
        (
            "no manifest",
            TestCBOR.tag(
                107,
                TestCBOR.map([
                    (
                        TestCBOR.int(2),
                        TestCBOR.bytes(
                            TestCBOR.array([TestCBOR.bytes(TestCBOR.array([TestCBOR.int(-16), TestCBOR.bytes([1])]))])
                        )
                    )
                ])
            ),
            .invalidSUITEnvelope
        ),
        ("truncated", Array(TestCBOR.envelope(sequence: 1).bytes.dropLast(3)), .invalidSUITEnvelope),
    ])
    func malformedEnvelopesGiveSpecificErrors(label: String, bytes: [UInt8], code: MCUbootError.Code) {
        let error = #expect(throws: MCUbootError.self, "\(label)") { try SUITEnvelope(Data(bytes)) }
        #expect(error?.code == code, "\(label): \(error.map { "\($0)" } ?? "")")
    }

    @Test func truncatedAndCorruptedEnvelopesNeverCrash() throws {
        let original = Array(try Fixture.data("rfc9124_example0.suit"))
        for length in 0..<original.count {
            #expect(throws: MCUbootError.self) { try SUITEnvelope(Data(original.prefix(length))) }
        }
        var generator = TestBytes.SeededGenerator(seed: 107)
        for _ in 0..<1000 {
            var bytes = original
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            bytes[index] = UInt8.random(in: 0...255, using: &generator)
            if let envelope = try? SUITEnvelope(Data(bytes)) {
                #expect(envelope.digest.count <= bytes.count)
            }
        }
    }

    @Test func recognisesTheTagByItsFirstBytes() {
        #expect(SUITEnvelope.looksLikeEnvelope([0xd8, 0x6b, 0xa2]))
        #expect(!SUITEnvelope.looksLikeEnvelope([0xd8]))
        #expect(!SUITEnvelope.looksLikeEnvelope([0x3d, 0xb8, 0xf3, 0x96]))
    }
}
