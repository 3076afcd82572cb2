import Foundation
import MCUboot
import SMPCore
import SMPTestSupport
import Testing

@testable import SMPSimulator

@Suite("SUITHandler")
struct SUITHandlerTests {
    static func envelope() throws -> Data {
        try Data(
            contentsOf: Peers.packageRoot.appendingPathComponent("Tests/MCUbootTests/Fixtures/rfc9124_example0.suit")
        )
    }

    @Test("manifest list and state")
    func manifests() async throws {
        var client = try await TestClient()
        let list = try await client.send(SUITManagement.ManifestList())
        #expect(list.manifests.map(\.role) == [0x20])
        let state = try await client.send(SUITManagement.ManifestState(role: 0x20))
        #expect(state.sequenceNumber == 1)
        #expect(state.digestAlgorithm == -16)
    }

    @Test("envelope upload, then the device requests a resource, the client streams it, the manifest is installed")
    func envelopeAndResource() async throws {
        var client = try await TestClient()
        let envelope = try Self.envelope()
        let parsed = try SUITEnvelope(envelope)
        var offset = 0
        while offset < envelope.count {
            let end = min(offset + 100, envelope.count)
            let chunk = SUITManagement.EnvelopeUpload(
                offset: UInt64(offset),
                data: envelope[offset..<end],
                length: offset == 0 ? UInt64(envelope.count) : nil
            )
            let response = try await client.send(chunk)
            #expect(response.offset == UInt64(end))
            offset = end
        }
        let request = try await client.send(SUITManagement.MissingImageState())
        if parsed.integratedPayloads.isEmpty {
            let session = try #require(request.streamSessionID)
            #expect(request.resourceURI == "file://app.bin")
            let image = Data(repeating: 0x42, count: 300)
            let upload = try await client.send(
                SUITManagement.MissingImageUpload(
                    streamSessionID: session,
                    offset: 0,
                    data: image,
                    length: UInt64(image.count)
                )
            )
            #expect(upload.offset == 300)
            #expect(try await client.send(SUITManagement.MissingImageState()).streamSessionID == nil)
        }
        let state = try await client.send(SUITManagement.ManifestState(role: 0x20))
        #expect(state.digest == Data(parsed.digest))
        _ = try await client.send(SUITManagement.Cleanup())
    }

    @Test("a cache chunk whose offset is near the top of the range is answered, not a crash")
    func cacheOffsetAtTheTop() async throws {
        var client = try await TestClient()
        let answer = try await client.send(
            SUITManagement.CacheRawUpload(targetID: 2, offset: .max - 1, data: Data([1, 2]))
        )
        #expect(answer.offset == .max)
    }

    @Test("an envelope that does not parse is refused")
    func badEnvelope() async throws {
        var client = try await TestClient()
        let junk = Data([0xd8, 0x6b, 0x01])
        let error = await deviceError {
            _ = try await client.send(SUITManagement.EnvelopeUpload(offset: 0, data: junk, length: UInt64(junk.count)))
        }
        #expect(error?.returnCode == .invalidValue)
    }

    static let answers: [AnswerCase] = [
        AnswerCase(
            "manifest list",
            SUITManagement.ManifestList(),
            [
                "bf",  // {_
                "696d616e696665737473",  //   "manifests":
                "9f",  //   [_
                "bf",  //     {_
                "64726f6c651820",  //       "role": 32
                "ff",  //     }
                "ff",  //   ]
                "ff",  // }
            ]
        ),
        AnswerCase(
            "manifest state",
            SUITManagement.ManifestState(role: 0x20),
            [
                "bf",  // {_
                "68636c6173735f696450c1c1c1c1c1c1c1c1c1c1",  //   "class_id": h'c1c1c1c1…' (16 bytes)
                "c1c1c1c1c1c1",
                "6976656e646f725f6964507e7e7e7e7e7e7e7e7e",  //   "vendor_id": h'7e7e7e7e…' (16 bytes)
                "7e7e7e7e7e7e7e",
                "781b646f776e67726164655f70726576656e7469",  //   "downgrade_prevention_policy": 1
                "6f6e5f706f6c69637901",
                "7820696e646570656e64656e745f757064617465",  //   "independent_updateability_policy": 1
                "6162696c6974795f706f6c69637901",
                "781d7369676e61747572655f7665726966696361",  //   "signature_verification_policy": 0
                "74696f6e5f706f6c69637900",
                "6664696765737458205a5a5a5a5a5a5a5a5a5a5a",  //   "digest": h'5a5a5a5a…' (32 bytes)
                "5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a",
                "5a",
                "706469676573745f616c676f726974686d2f",  //   "digest_algorithm": -16
                "6f7369676e61747572655f636865636b02",  //   "signature_check": 2
                "6f73657175656e63655f6e756d62657201",  //   "sequence_number": 1
                "7073656d616e7469635f76657273696f6e",  //   "semantic_version":
                "9f",  //   [_
                "01",  //     1
                "00",  //     0
                "00",  //     0
                "ff",  //   ]
                "ff",  // }
            ]
        ),
        AnswerCase(
            "no image missing",
            SUITManagement.MissingImageState(),
            [
                "bfff"  // {}
            ]
        ),
        AnswerCase(
            "cache chunk: rc, then offset",
            SUITManagement.CacheRawUpload(targetID: 2, offset: 0, data: Data([1, 2, 3]), length: 10),
            [
                "bf",  // {_
                "62726300",  //   "rc": 0
                "636f666603",  //   "off": 3
                "ff",  // }
            ]
        ),
        AnswerCase(
            "envelope chunk at the wrong offset: rc 1 with the offset expected",
            SUITManagement.EnvelopeUpload(offset: 5, data: Data([1])),
            [
                "bf",  // {_
                "62726301",  //   "rc": 1
                "636f666600",  //   "off": 0
                "ff",  // }
            ]
        ),
    ]

    @Test("answers byte for byte as suitfu_mgmt writes them", arguments: answers)
    func answerBytes(_ answer: AnswerCase) async throws {
        try await answer.check()
    }
}
