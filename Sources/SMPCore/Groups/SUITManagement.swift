import Foundation

/// SUIT management, group 66: firmware update with SUIT envelopes on nRF Connect SDK devices
/// (`suitfu_mgmt`, group `CONFIG_MGMT_GROUP_ID_SUIT`, 66 in Nordic's mobile libraries).
///
/// Spec: `smp-protocol.md` §11. Keys follow nRF Connect SDK `subsys/mgmt/suitfu` (manifest list
/// and state, envelope upload, image fetch, cache raw upload) and Nordic's iOS `SuitManager`
/// (`defer_install`, cleanup). Not in upstream Zephyr; newer SDKs change the command set, so
/// treat the group as optional.
///
/// Flow: upload the envelope (command 2). If the envelope needs images it does not carry, the
/// device asks for them, but SMP has no server push, so the client polls the missing-image state
/// (command 3; Nordic polls every 150 ms for 5 s) and streams each requested resource with
/// command 4. With SUIT caches, upload the envelope with `defer_install`, upload the caches
/// (command 5), then send an envelope upload with `off` 0 and `len` 0 to start processing.
///
/// The device uses v1 management codes only, and its upload handlers answer every chunk with
/// `rc` and `off`; a chunk at an unexpected offset gets `rc` 1 (EUNKNOWN) together with the
/// expected `off`, which surfaces as an ``SMPDeviceError``.
public enum SUITManagement: SMPManagementGroup {
    /// Group 66.
    public static let group = SMPGroup.suit

    /// No group table: only the two codes every group shares.
    public static let returnCodeNames = ["OK", "UNKNOWN"]

    /// This group's return code (never sent in a v2 `err` by `suitfu_mgmt`).
    public typealias ReturnCode = SMPGroupReturnCode<SUITManagement>

    /// The answer to every SUIT upload chunk (commands 2, 4 and 5).
    public struct UploadResponse: Codable, Sendable, Hashable {
        /// The offset the device expects next, i.e. the bytes accepted so far (wire key `off`,
        /// always present).
        public var offset: UInt64

        /// Creates a response.
        /// - Parameter offset: the next expected offset.
        public init(offset: UInt64) { self.offset = offset }

        enum CodingKeys: String, CodingKey { case offset = "off" }
    }

    // MARK: - 0 manifest list

    /// Command 0, manifest list: the roles of the manifests the device supports.
    public struct ManifestList: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .suit }
        public static var command: UInt8 { 0 }

        /// Creates the request (an empty map).
        public init() {}

        /// One supported manifest.
        public struct Manifest: Codable, Sendable, Hashable {
            /// The manifest role (`suit_manifest_role_t`, e.g. 0x20 application root) (wire key
            /// `role`, always present).
            public var role: UInt32

            /// Creates a manifest entry.
            /// - Parameter role: the role.
            public init(role: UInt32) { self.role = role }
        }

        /// The manifests.
        public struct Response: Codable, Sendable, Hashable {
            /// One entry per supported manifest role (wire key `manifests`, always present).
            public var manifests: [Manifest]

            /// Creates a response.
            /// - Parameter manifests: the manifests.
            public init(manifests: [Manifest]) { self.manifests = manifests }
        }
    }

    // MARK: - 1 manifest state

    /// Command 1, manifest state: the configuration of one manifest role and, when installed,
    /// attributes of the installed manifest.
    public struct ManifestState: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .suit }
        public static var command: UInt8 { 1 }

        /// The manifest role, from ``ManifestList`` (wire key `role`, required).
        public var role: UInt32

        /// Creates the request.
        /// - Parameter role: the manifest role.
        public init(role: UInt32) { self.role = role }

        /// The manifest's class and installed state.
        public struct Response: Codable, Sendable, Hashable {
            /// Class UUID, 16 bytes (wire key `class_id`, always present).
            public var classID: Data
            /// Vendor UUID, 16 bytes (wire key `vendor_id`, always present).
            public var vendorID: Data
            /// Downgrade prevention policy (wire key `downgrade_prevention_policy`, always present).
            public var downgradePreventionPolicy: UInt32
            /// Independent updateability policy (wire key `independent_updateability_policy`,
            /// always present).
            public var independentUpdateabilityPolicy: UInt32
            /// Signature verification policy (wire key `signature_verification_policy`, always
            /// present).
            public var signatureVerificationPolicy: UInt32
            /// Digest of the installed manifest (wire key `digest`, only when one is installed).
            public var digest: Data?
            /// COSE algorithm id of `digest`, e.g. −16 SHA-256 (wire key `digest_algorithm`, when
            /// installed).
            public var digestAlgorithm: Int32?
            /// Signature check status of the installed manifest (wire key `signature_check`, when
            /// installed).
            public var signatureCheck: UInt32?
            /// Sequence number of the installed manifest (wire key `sequence_number`, when
            /// installed).
            public var sequenceNumber: UInt32?
            /// Semantic version as 1–5 integers (SUIT raw semver; negative values mark
            /// pre-releases) (wire key `semantic_version`, when installed and known).
            public var semanticVersion: [Int32]?

            /// Creates a response.
            public init(
                classID: Data,
                vendorID: Data,
                downgradePreventionPolicy: UInt32,
                independentUpdateabilityPolicy: UInt32,
                signatureVerificationPolicy: UInt32,
                digest: Data? = nil,
                digestAlgorithm: Int32? = nil,
                signatureCheck: UInt32? = nil,
                sequenceNumber: UInt32? = nil,
                semanticVersion: [Int32]? = nil
            ) {
                self.classID = classID
                self.vendorID = vendorID
                self.downgradePreventionPolicy = downgradePreventionPolicy
                self.independentUpdateabilityPolicy = independentUpdateabilityPolicy
                self.signatureVerificationPolicy = signatureVerificationPolicy
                self.digest = digest
                self.digestAlgorithm = digestAlgorithm
                self.signatureCheck = signatureCheck
                self.sequenceNumber = sequenceNumber
                self.semanticVersion = semanticVersion
            }

            enum CodingKeys: String, CodingKey {
                case classID = "class_id"
                case vendorID = "vendor_id"
                case downgradePreventionPolicy = "downgrade_prevention_policy"
                case independentUpdateabilityPolicy = "independent_updateability_policy"
                case signatureVerificationPolicy = "signature_verification_policy"
                case digest
                case digestAlgorithm = "digest_algorithm"
                case signatureCheck = "signature_check"
                case sequenceNumber = "sequence_number"
                case semanticVersion = "semantic_version"
            }
        }
    }

    // MARK: - 2 envelope upload

    /// Command 2, envelope upload: one chunk of a SUIT envelope (a candidate update).
    ///
    /// The first chunk carries `len` (and `defer_install` when caches follow); the device erases
    /// the DFU partition for it. Once the last byte arrives the device processes the envelope,
    /// unless installation was deferred; ``processDeferredEnvelope`` then starts it.
    public struct EnvelopeUpload: SMPWriteRequest, Hashable {
        /// A chunk is idempotent (it carries its offset); the request that processes a deferred
        /// envelope (offset 0, no length, no data) is not: it installs.
        public var isIdempotent: Bool { !(offset == 0 && (length ?? 0) == 0 && (data ?? Data()).isEmpty) }

        public static var group: SMPGroup { .suit }
        public static var command: UInt8 { 2 }

        /// Offset of this chunk, in bytes (wire key `off`, required).
        public var offset: UInt64
        /// The chunk's bytes (wire key `data`, present in every chunk; absent only from the
        /// "process deferred envelope" request).
        public var data: Data?
        /// Envelope size in bytes (wire key `len`, required when `off` is 0; 0 together with `off`
        /// 0 and no data starts processing a deferred envelope).
        public var length: UInt64?
        /// Do not process the envelope after its last chunk; wait for a processing request (wire
        /// key `defer_install`, optional, first chunk only).
        public var deferInstall: Bool?

        /// Creates an envelope chunk.
        /// - Parameters:
        ///   - offset: offset of the chunk.
        ///   - data: the chunk.
        ///   - length: the envelope size (first chunk).
        ///   - deferInstall: defer processing (first chunk).
        public init(offset: UInt64, data: Data?, length: UInt64? = nil, deferInstall: Bool? = nil) {
            self.offset = offset
            self.data = data
            self.length = length
            self.deferInstall = deferInstall
        }

        /// The request that starts processing an envelope uploaded with `defer_install`:
        /// `{off: 0, len: 0}`.
        public static var processDeferredEnvelope: EnvelopeUpload { EnvelopeUpload(offset: 0, data: nil, length: 0) }

        enum CodingKeys: String, CodingKey {
            case offset = "off"
            case data
            case length = "len"
            case deferInstall = "defer_install"
        }

        /// The device's progress.
        public typealias Response = UploadResponse
    }

    // MARK: - 3 missing image state

    /// Command 3, missing image state: poll whether the device is waiting for an image (a
    /// "resource") the envelope refers to.
    public struct MissingImageState: SMPReadRequest, Hashable {
        public static var group: SMPGroup { .suit }
        public static var command: UInt8 { 3 }

        /// Creates the request (an empty map).
        public init() {}

        /// The requested resource, or nothing (an empty map: keep polling).
        public struct Response: Codable, Sendable, Hashable {
            /// Session to quote in ``MissingImageUpload`` (wire key `stream_session_id`, only when
            /// an image is requested).
            public var streamSessionID: UInt32?
            /// The requested resource's URI, e.g. `file://app.bin`, as bytes (wire key
            /// `resource_id`, only when an image is requested).
            public var resourceID: Data?

            /// Creates a response.
            public init(streamSessionID: UInt32? = nil, resourceID: Data? = nil) {
                self.streamSessionID = streamSessionID
                self.resourceID = resourceID
            }

            /// The resource URI as text, if it is UTF-8.
            public var resourceURI: String? { resourceID.flatMap { String(data: $0, encoding: .utf8) } }

            enum CodingKeys: String, CodingKey {
                case streamSessionID = "stream_session_id"
                case resourceID = "resource_id"
            }
        }
    }

    // MARK: - 4 missing image upload

    /// Command 4, missing image upload: one chunk of the resource the device asked for.
    public struct MissingImageUpload: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .suit }
        public static var command: UInt8 { 4 }

        /// The session from ``MissingImageState`` (wire key `stream_session_id`, required; a
        /// stale session is refused with v1 `EBADSTATE`).
        public var streamSessionID: UInt32
        /// Offset of this chunk, in bytes (wire key `off`, required).
        public var offset: UInt64
        /// The chunk's bytes (wire key `data`, required).
        public var data: Data
        /// Resource size in bytes (wire key `len`, required when `off` is 0).
        public var length: UInt64?

        /// Creates a resource chunk.
        public init(streamSessionID: UInt32, offset: UInt64, data: Data, length: UInt64? = nil) {
            self.streamSessionID = streamSessionID
            self.offset = offset
            self.data = data
            self.length = length
        }

        enum CodingKeys: String, CodingKey {
            case streamSessionID = "stream_session_id"
            case offset = "off"
            case data
            case length = "len"
        }

        /// The device's progress.
        public typealias Response = UploadResponse
    }

    // MARK: - 5 cache raw upload

    /// Command 5, cache raw upload: one chunk of a SUIT cache (or raw image) written to a cache
    /// pool or image partition.
    public struct CacheRawUpload: SMPWriteRequest, Hashable {
        public static var group: SMPGroup { .suit }
        public static var command: UInt8 { 5 }

        /// Cache pool or image id to write to (wire key `target_id`, required with `off` 0;
        /// Nordic's clients send it with every chunk). Unknown → v1 `ENOENT`.
        public var targetID: UInt32?
        /// Offset of this chunk, in bytes (wire key `off`, required).
        public var offset: UInt64
        /// The chunk's bytes (wire key `data`, required).
        public var data: Data
        /// Cache size in bytes (wire key `len`, required when `off` is 0).
        public var length: UInt64?

        /// Creates a cache chunk.
        public init(targetID: UInt32?, offset: UInt64, data: Data, length: UInt64? = nil) {
            self.targetID = targetID
            self.offset = offset
            self.data = data
            self.length = length
        }

        enum CodingKeys: String, CodingKey {
            case targetID = "target_id"
            case offset = "off"
            case data
            case length = "len"
        }

        /// The device's progress.
        public typealias Response = UploadResponse
    }

    // MARK: - 6 cleanup

    /// Command 6, cleanup: erase the DFU partition and every DFU cache partition.
    public struct Cleanup: SMPWriteRequest, Hashable {
        /// Never sent again automatically: it discards what the device holds, including what arrived since.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .suit }
        public static var command: UInt8 { 6 }

        /// Creates the request (an empty map).
        public init() {}

        /// Success carries no fields.
        public typealias Response = SMPEmptyResponse
    }
}

extension SMPGroupReturnCode where Group == SUITManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
}
