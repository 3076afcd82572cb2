import Foundation
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

struct SUITManagementTests {
    @Test(arguments: [
        RequestCase(SUITManagement.ManifestList(), "0800000100420000a0"),
        RequestCase(SUITManagement.ManifestState(role: 0x20), "0800000800420001a164726f6c651820"),
        RequestCase(SUITManagement.EnvelopeUpload.processDeferredEnvelope, "0a00000b00420002a2636f666600636c656e00"),
        RequestCase(
            SUITManagement.EnvelopeUpload(offset: 0, data: Data([0xaa]), length: 100, deferInstall: true),
            "0a00002200420002a4636f666600646461746141aa636c656e18646d64656665725f696e7374616c6cf5"
        ),
        RequestCase(SUITManagement.MissingImageState(), "0800000100420003a0"),
        RequestCase(
            SUITManagement.MissingImageUpload(streamSessionID: 9, offset: 0, data: Data([0xaa]), length: 1),
            "0a00002500420004a47173747265616d5f73657373696f6e5f696409636f666600646461746141aa636c656e01"
        ),
        RequestCase(
            SUITManagement.CacheRawUpload(targetID: 2, offset: 16, data: Data([0xbb])),
            "0a00001800420005a3697461726765745f696402636f666610646461746141bb"
        ),
        RequestCase(SUITManagement.Cleanup(), "0a00000100420006a0"),
    ])
    func requestsEncodeToTheseBytes(_ example: RequestCase) throws {
        #expect(try example.encode() == example.hex)
    }

    @Test func manifestStateWithoutAnInstalledManifest() throws {
        let state = try GroupTesting.response(
            to: SUITManagement.ManifestState.self,
            [
                "class_id": .byteString(Data(repeating: 1, count: 16)),
                "vendor_id": .byteString(Data(repeating: 2, count: 16)),
                "downgrade_prevention_policy": 0, "independent_updateability_policy": 1,
                "signature_verification_policy": 2,
            ]
        )
        #expect(state.digest == nil && state.semanticVersion == nil && state.sequenceNumber == nil)
        #expect(state.signatureVerificationPolicy == 2)
        let roles = try GroupTesting.response(
            to: SUITManagement.ManifestList.self,
            ["manifests": [["role": 32], ["role": 33]]]
        )
        #expect(roles.manifests.map(\.role) == [32, 33])
    }

    @Test func pollingAnswersEmptyUntilAResourceIsRequested() throws {
        let idle = try GroupTesting.response(to: SUITManagement.MissingImageState.self, [:])
        #expect(idle.streamSessionID == nil && idle.resourceURI == nil)
        let request = try GroupTesting.response(
            to: SUITManagement.MissingImageState.self,
            ["stream_session_id": 3, "resource_id": .byteString(Data("file://app.bin".utf8))]
        )
        #expect(request.streamSessionID == 3 && request.resourceURI == "file://app.bin")
    }

    @Test func uploadRepliesCarryRcBesideOffset() throws {
        #expect(try GroupTesting.response(to: SUITManagement.EnvelopeUpload.self, ["rc": 0, "off": 32]).offset == 32)
        #expect(try GroupTesting.response(to: SUITManagement.CacheRawUpload.self, ["off": 16]) == .init(offset: 16))
        // A chunk at an unexpected offset gets rc 1 with the expected offset: an error for us.
        let wrongOffset = try #require(
            try GroupTesting.deviceError(SUITManagement.MissingImageUpload.self, ["rc": 1, "off": 32])
        )
        #expect(wrongOffset.codeName == "EUNKNOWN")
        let stale = try #require(try GroupTesting.deviceError(SUITManagement.MissingImageUpload.self, ["rc": 6]))
        #expect(stale.returnCode == .badState)
    }

    @Test func envelopeUploadDecodesTheProcessingRequest() throws {
        let decoded = try CBORDecoder().decode(SUITManagement.EnvelopeUpload.self, from: ["off": 0, "len": 0] as CBOR)
        #expect(decoded == .processDeferredEnvelope)
    }

    @Test(arguments: [
        ReturnCodeCase(SUITManagement.ReturnCode.ok, 0, "OK"),
        ReturnCodeCase(SUITManagement.ReturnCode.unknown, 1, "UNKNOWN"),
    ])
    func returnCodesAreTheSharedPair(_ example: ReturnCodeCase<SUITManagement>) {
        example.verify()
        #expect(SMPGroup.suit.returnCodeNames == ["OK", "UNKNOWN"])
    }
}
