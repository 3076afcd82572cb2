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

    @Test("an envelope that does not parse is refused")
    func badEnvelope() async throws {
        var client = try await TestClient()
        let junk = Data([0xd8, 0x6b, 0x01])
        let error = await deviceError {
            _ = try await client.send(SUITManagement.EnvelopeUpload(offset: 0, data: junk, length: UInt64(junk.count)))
        }
        #expect(error?.returnCode == .invalidValue)
    }
}
