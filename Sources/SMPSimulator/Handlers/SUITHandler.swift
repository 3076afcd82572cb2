import Foundation
import MCUboot
import SMPCBOR
import SMPCore

/// What the simulated nRF54H-style SUIT device holds.
struct SUITState: Sendable {
    /// The installed root manifest: digest and sequence number.
    var installedDigest: [UInt8] = Array(repeating: 0x5a, count: 32)
    var installedSequence: UInt64 = 1
    /// The envelope being uploaded.
    var envelope: [UInt8] = []
    var envelopeLength = 0
    /// An envelope waiting for an image it does not carry: the session and resource it asks for.
    var pendingRequest: (session: UInt32, resource: String, envelope: SUITEnvelope)?
    var resource: [UInt8] = []
    var resourceLength = 0
    var nextSession: UInt32 = 1

    mutating func resetVolatile() {
        envelope = []
        envelopeLength = 0
        pendingRequest = nil
        resource = []
        resourceLength = 0
    }
}

/// Group 66, SUIT (nRF Connect SDK `suitfu_mgmt`): enough for an envelope upload and one
/// resource request, answered the way that code answers (`rc` and `off` on every chunk, v1 codes).
enum SUITHandler {
    static let applicationRootRole: UInt32 = 0x20
    static let requestedResource = "file://app.bin"

    static let group = HandlerGroup(
        group: .suit,
        name: "suitfu mgmt",
        routes: [
            Route(SUITManagement.ManifestList.self) { _, _, _ in
                CBORMap(response: SUITManagement.ManifestList.Response(manifests: [.init(role: applicationRootRole)]))
            },
            Route(SUITManagement.ManifestState.self) { request, device, _ throws(HandlerFailure) in
                try manifestState(request, device: device)
            },
            Route(SUITManagement.EnvelopeUpload.self) { request, device, _ throws(HandlerFailure) in
                try envelopeUpload(request, device: &device)
            },
            Route(SUITManagement.MissingImageState.self) { _, device, _ in
                let pending = device.suit.pendingRequest
                return CBORMap(
                    response: SUITManagement.MissingImageState.Response(
                        streamSessionID: pending?.session,
                        resourceID: pending.map { Data($0.resource.utf8) }
                    )
                )
            },
            Route(SUITManagement.MissingImageUpload.self) { request, device, _ throws(HandlerFailure) in
                try resourceUpload(request, device: &device)
            },
            Route(SUITManagement.CacheRawUpload.self) { request, _, _ throws(HandlerFailure) in
                let chunk = try request.decode(SUITManagement.CacheRawUpload.self)
                // An offset from the wire near the top of the range must not trap.
                let end = chunk.offset.addingReportingOverflow(UInt64(chunk.data.count))
                return chunkResponse(rc: .ok, offset: end.overflow ? .max : end.partialValue)
            },
            Route(SUITManagement.Cleanup.self) { _, device, _ in
                device.suit.resetVolatile()
                return CBORMap()
            },
        ]
    )

    static func manifestState(_ request: SMPServerRequest, device: DeviceCore) throws(HandlerFailure) -> CBORMap {
        let role = try request.decode(SUITManagement.ManifestState.self).role
        guard role == applicationRootRole else { throw .management(.noEntry) }
        return CBORMap(
            response: SUITManagement.ManifestState.Response(
                classID: Data(repeating: 0xc1, count: 16),
                vendorID: Data(repeating: 0x7e, count: 16),
                downgradePreventionPolicy: 1,
                independentUpdateabilityPolicy: 1,
                signatureVerificationPolicy: 0,
                digest: Data(device.suit.installedDigest),
                digestAlgorithm: -16,
                signatureCheck: 2,
                sequenceNumber: UInt32(clamping: device.suit.installedSequence),
                semanticVersion: [1, 0, 0]
            )
        )
    }

    /// `suitfu_mgmt` answers every chunk with `rc` first, then the offset it expects.
    private static func chunkResponse(rc: SMPReturnCode, offset: UInt64) -> CBORMap {
        CBORMap(returnCode: rc, response: SUITManagement.UploadResponse(offset: offset))
    }

    private static func envelopeUpload(_ request: SMPServerRequest, device: inout DeviceCore) throws(HandlerFailure)
        -> CBORMap
    {
        let chunk = try request.decode(SUITManagement.EnvelopeUpload.self)
        let data = Array(chunk.data ?? Data())
        if chunk.offset == 0 {
            guard let length = chunk.length else { throw .management(.invalidValue) }
            if length == 0 {
                // Process a deferred envelope.
                return try process(device: &device, deferred: true)
            }
            device.suit.envelope = []
            device.suit.envelopeLength = Int(clamping: length)
        }
        guard Int(clamping: chunk.offset) == device.suit.envelope.count, device.suit.envelopeLength > 0 else {
            return chunkResponse(rc: .unknown, offset: UInt64(device.suit.envelope.count))
        }
        guard device.suit.envelope.count + data.count <= device.suit.envelopeLength else {
            throw .management(.invalidValue)
        }
        device.suit.envelope += data
        if device.suit.envelope.count == device.suit.envelopeLength && chunk.deferInstall != true {
            _ = try process(device: &device, deferred: false)
        }
        return chunkResponse(rc: .ok, offset: UInt64(device.suit.envelope.count))
    }

    /// Validates the uploaded envelope; installs it, or asks for the image it does not carry.
    private static func process(device: inout DeviceCore, deferred: Bool) throws(HandlerFailure) -> CBORMap {
        guard let envelope = try? SUITEnvelope(Data(device.suit.envelope)), envelope.isDigestValid != false else {
            device.suit.envelope = []
            throw .management(.invalidValue)
        }
        if envelope.integratedPayloads.isEmpty {
            let session = device.suit.nextSession
            device.suit.nextSession &+= 1
            device.suit.pendingRequest = (session, requestedResource, envelope)
            device.suit.resource = []
            device.suit.resourceLength = 0
        } else {
            install(envelope, device: &device)
        }
        return deferred ? chunkResponse(rc: .ok, offset: 0) : CBORMap()
    }

    private static func install(_ envelope: SUITEnvelope, device: inout DeviceCore) {
        device.suit.installedDigest = envelope.digest
        device.suit.installedSequence = envelope.sequenceNumber ?? device.suit.installedSequence + 1
        device.suit.pendingRequest = nil
        device.suit.envelope = []
    }

    private static func resourceUpload(_ request: SMPServerRequest, device: inout DeviceCore) throws(HandlerFailure)
        -> CBORMap
    {
        let chunk = try request.decode(SUITManagement.MissingImageUpload.self)
        guard let pending = device.suit.pendingRequest, pending.session == chunk.streamSessionID else {
            throw .management(.badState)
        }
        if chunk.offset == 0 {
            device.suit.resource = []
            device.suit.resourceLength = Int(clamping: chunk.length ?? 0)
        }
        guard Int(clamping: chunk.offset) == device.suit.resource.count else {
            return chunkResponse(rc: .unknown, offset: UInt64(device.suit.resource.count))
        }
        device.suit.resource += chunk.data
        if device.suit.resourceLength > 0 && device.suit.resource.count >= device.suit.resourceLength {
            install(pending.envelope, device: &device)
        }
        return chunkResponse(rc: .ok, offset: UInt64(device.suit.resource.count))
    }
}
