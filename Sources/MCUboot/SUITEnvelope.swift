import Foundation
import SMPCBOR

/// A SUIT envelope (RFC 9124 manifest format, as the nRF Connect SDK builds it for nRF54H):
/// CBOR tag 107 around a map whose key 2 is the authentication wrapper and key 3 the manifest.
///
/// The digest the device reports and the client refers to is the first element of the
/// authentication wrapper: a bstr-wrapped `[algorithm-id, digest-bytes]` computed over the
/// bstr-wrapped manifest. This type reads it, recomputes it, and reads the manifest's sequence
/// number; it does not interpret the command sequences.
public struct SUITEnvelope: Sendable {
    /// The CBOR tag of `SUIT_Envelope_Tagged`.
    public static let tag: UInt64 = 107

    /// The envelope bytes.
    public let data: Data
    /// The COSE algorithm id of the digest: −16 SHA-256, −43 SHA-384, −44 SHA-512, −18/−45 SHAKE.
    public let digestAlgorithmID: Int64
    /// The manifest digest from the authentication wrapper (what SUIT calls the envelope's digest).
    public let digest: [UInt8]
    /// Whether `digest` equals the digest recomputed over the bstr-wrapped manifest; `nil` when the
    /// algorithm is not a SHA-2 one this library computes.
    public let isDigestValid: Bool?
    /// `suit-manifest-version` (key 1 of the manifest).
    public let manifestVersion: UInt64?
    /// `suit-manifest-sequence-number` (key 2 of the manifest): the anti-rollback counter.
    public let sequenceNumber: UInt64?
    /// Number of authentication blocks (COSE signatures) after the digest in the wrapper.
    public let signatureCount: Int
    /// Names of payloads integrated in the envelope (text keys such as `#app`).
    public let integratedPayloads: [String]

    /// Whether bytes start like a tagged SUIT envelope (`D8 6B`).
    /// - Parameter bytes: the file's bytes.
    public static func looksLikeEnvelope(_ bytes: some Collection<UInt8>) -> Bool {
        Array(bytes.prefix(2)) == [0xd8, 0x6b]
    }

    /// The name of a COSE digest algorithm id.
    public static func algorithmName(_ id: Int64) -> String {
        switch id {
        case -16: "SHA-256"
        case -43: "SHA-384"
        case -44: "SHA-512"
        case -18: "SHAKE128"
        case -45: "SHAKE256"
        default: "algorithm \(id)"
        }
    }

    /// Parses an envelope.
    /// - Parameter data: the `.suit` file.
    /// - Throws: ``MCUbootError`` ``MCUbootError/Code/invalidSUITEnvelope`` for malformed CBOR or a
    ///   wrong shape, ``MCUbootError/Code/suitDigestMissing`` when the authentication wrapper or its
    ///   digest is absent.
    public init(_ data: Data) throws(MCUbootError) {
        self.data = data
        let root = try Self.decode(data, what: "envelope")
        guard case .tagged(Self.tag, let inner) = root else {
            throw MCUbootError(.invalidSUITEnvelope, "the envelope is not CBOR tag 107 (SUIT_Envelope_Tagged)")
        }
        guard case .map(let envelope) = inner else {
            throw MCUbootError(.invalidSUITEnvelope, "tag 107 does not hold a map")
        }
        guard let wrapperItem = envelope[.unsignedInt(2)] else {
            throw MCUbootError(.suitDigestMissing, "the envelope has no authentication wrapper (key 2)")
        }
        guard case .byteString(let wrapperBytes) = wrapperItem,
            case .array(let blocks) = try Self.decode(wrapperBytes, what: "authentication wrapper")
        else {
            throw MCUbootError(.invalidSUITEnvelope, "the authentication wrapper is not a bstr-wrapped array")
        }
        guard let first = blocks.first else {
            throw MCUbootError(.suitDigestMissing, "the authentication wrapper is empty")
        }
        guard case .byteString(let digestBytes) = first,
            case .array(let pair) = try Self.decode(digestBytes, what: "digest"),
            pair.count == 2, let algorithm = pair[0].int64Value, case .byteString(let digest) = pair[1]
        else {
            throw MCUbootError(
                .suitDigestMissing,
                "the authentication wrapper does not start with a bstr-wrapped [algorithm-id, digest-bytes]"
            )
        }
        digestAlgorithmID = algorithm
        self.digest = Array(digest)
        signatureCount = blocks.count - 1

        guard case .byteString(let manifestBytes)? = envelope[.unsignedInt(3)] else {
            throw MCUbootError(.invalidSUITEnvelope, "the envelope has no manifest (key 3) byte string")
        }
        guard case .map(let manifest) = try Self.decode(manifestBytes, what: "manifest") else {
            throw MCUbootError(.invalidSUITEnvelope, "the manifest is not a map")
        }
        manifestVersion = manifest[.unsignedInt(1)]?.uint64Value
        sequenceNumber = manifest[.unsignedInt(2)]?.uint64Value

        let wrapped = Self.byteStringHead(count: manifestBytes.count) + Array(manifestBytes)
        switch algorithm {
        case -16: isDigestValid = ImageHashAlgorithm.sha256.hash(wrapped) == self.digest
        case -43: isDigestValid = ImageHashAlgorithm.sha384.hash(wrapped) == self.digest
        case -44: isDigestValid = ImageHashAlgorithm.sha512.hash(wrapped) == self.digest
        default: isDigestValid = nil
        }
        integratedPayloads = envelope.entries.compactMap { entry in
            if case .textString(let name) = entry.key { name } else { nil }
        }
    }

    /// The digest algorithm's name.
    public var digestAlgorithmName: String { Self.algorithmName(digestAlgorithmID) }

    private static func decode(_ bytes: Data, what: String) throws(MCUbootError) -> CBOR {
        do {
            return try CBORReader.decode(bytes)
        } catch {
            throw MCUbootError(.invalidSUITEnvelope, "the \(what) is not well-formed CBOR", cause: error)
        }
    }

    /// The CBOR head of a definite-length byte string (major type 2), shortest form.
    private static func byteStringHead(count: Int) -> [UInt8] {
        let length = UInt64(count)
        switch length {
        case 0..<24: return [0x40 | UInt8(length)]
        case 24...0xff: return [0x58, UInt8(length)]
        case 0x100...0xffff: return [0x59] + (0..<2).reversed().map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) }
        case 0x1_0000...0xffff_ffff:
            return [0x5a] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) }
        default: return [0x5b] + (0..<8).reversed().map { UInt8(truncatingIfNeeded: length >> ($0 * 8)) }
        }
    }
}
