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
                var manifest = CBORMap()
                manifest.put("role", Int(applicationRootRole))
                var map = CBORMap()
                map.put("manifests", .array([.map(manifest)]))
                return map
            },
            Route(SUITManagement.ManifestState.self) { request, device, _ throws(HandlerFailure) in
                try manifestState(request, device: device)
            },
            Route(SUITManagement.EnvelopeUpload.self) { request, device, _ throws(HandlerFailure) in
                try envelopeUpload(request, device: &device)
            },
            Route(SUITManagement.MissingImageState.self) { _, device, _ in
                var map = CBORMap()
                if let pending = device.suit.pendingRequest {
                    map.put("stream_session_id", Int(pending.session))
                    map.put("resource_id", bytes: Array(pending.resource.utf8))
                }
                return map
            },
            Route(SUITManagement.MissingImageUpload.self) { request, device, _ throws(HandlerFailure) in
                try resourceUpload(request, device: &device)
            },
            Route(SUITManagement.CacheRawUpload.self) { request, _, _ throws(HandlerFailure) in
                let chunk = try request.decode(SUITManagement.CacheRawUpload.self)
                return chunkResponse(rc: 0, offset: Int(chunk.offset) + chunk.data.count)
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
        var map = CBORMap()
        map.put("class_id", bytes: Array(repeating: 0xc1, count: 16))
        map.put("vendor_id", bytes: Array(repeating: 0x7e, count: 16))
        map.put("downgrade_prevention_policy", 1)
        map.put("independent_updateability_policy", 1)
        map.put("signature_verification_policy", 0)
        map.put("digest", bytes: device.suit.installedDigest)
        map.put("digest_algorithm", -16)
        map.put("signature_check", 2)
        map.put("sequence_number", Int(device.suit.installedSequence))
        map.put("semantic_version", .array([1, 0, 0]))
        return map
    }

    private static func chunkResponse(rc: Int, offset: Int) -> CBORMap {
        var map = CBORMap()
        map.put("rc", rc)
        map.put("off", offset)
        return map
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
            return chunkResponse(rc: SMPReturnCode.unknown.rawValue, offset: device.suit.envelope.count)
        }
        guard device.suit.envelope.count + data.count <= device.suit.envelopeLength else {
            throw .management(.invalidValue)
        }
        device.suit.envelope += data
        if device.suit.envelope.count == device.suit.envelopeLength && chunk.deferInstall != true {
            _ = try process(device: &device, deferred: false)
        }
        return chunkResponse(rc: 0, offset: device.suit.envelope.count)
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
        return deferred ? chunkResponse(rc: 0, offset: 0) : CBORMap()
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
            return chunkResponse(rc: SMPReturnCode.unknown.rawValue, offset: device.suit.resource.count)
        }
        device.suit.resource += chunk.data
        if device.suit.resourceLength > 0 && device.suit.resource.count >= device.suit.resourceLength {
            install(pending.envelope, device: &device)
        }
        return chunkResponse(rc: 0, offset: device.suit.resource.count)
    }
}
