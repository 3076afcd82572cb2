import SMPBytes

/// A file that is not a usable MCUboot image, firmware package, SUIT envelope or key.
///
/// Every malformed input maps to one specific ``Code``; the ``message`` says what was expected
/// and what was found (with byte offsets where they help). Equality compares ``code`` only, so
/// tests can write `#expect(throws: MCUbootError(.tlvOutOfBounds))`.
public struct MCUbootError: CodedError {
    /// What went wrong. An open set: codes can be added without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case truncatedHeader, badMagic, invalidHeader, truncatedImage
            case badTLVInfoMagic, tlvOutOfBounds, tlvAreaMismatch, hashNotFound
            case unsupportedPackage, invalidZip, manifestMissing, invalidManifest, missingFile
            case invalidSUITEnvelope, suitDigestMissing
            case invalidKey, unsupportedKey, readFailed
        }
        private let kind: Kind

        /// Fewer bytes than the 32-byte header (or than the header size it declares).
        public static let truncatedHeader = Code(kind: .truncatedHeader)
        /// The first four bytes are not `ih_magic` (0x96f3b83d, or the legacy 0x96f3b83c).
        public static let badMagic = Code(kind: .badMagic)
        /// A header field is impossible, e.g. `ih_hdr_size` smaller than the 32-byte header.
        public static let invalidHeader = Code(kind: .invalidHeader)
        /// The payload (`ih_hdr_size + ih_img_size`) or a TLV area header runs past the end.
        public static let truncatedImage = Code(kind: .truncatedImage)
        /// A TLV area does not start with 0x6907 (or 0x6908 for the protected area).
        public static let badTLVInfoMagic = Code(kind: .badTLVInfoMagic)
        /// A TLV's length runs past the end of the file.
        public static let tlvOutOfBounds = Code(kind: .tlvOutOfBounds)
        /// A TLV area's total disagrees with `ih_protect_tlv_size` or with the TLVs inside it.
        public static let tlvAreaMismatch = Code(kind: .tlvAreaMismatch)
        /// The image has no SHA-256/384/512 TLV, so it has no hash to test or confirm.
        public static let hashNotFound = Code(kind: .hashNotFound)
        /// The content is neither an MCUboot image, a zip package nor a SUIT envelope.
        public static let unsupportedPackage = Code(kind: .unsupportedPackage)
        /// The content starts like a zip archive but cannot be read as one.
        public static let invalidZip = Code(kind: .invalidZip)
        /// A zip package without `manifest.json`.
        public static let manifestMissing = Code(kind: .manifestMissing)
        /// `manifest.json` is not JSON, or lacks or mistypes a required field.
        public static let invalidManifest = Code(kind: .invalidManifest)
        /// `manifest.json` names a file that is not in the zip.
        public static let missingFile = Code(kind: .missingFile)
        /// Not a SUIT envelope: no CBOR tag 107, not a map, or a malformed element.
        public static let invalidSUITEnvelope = Code(kind: .invalidSUITEnvelope)
        /// A SUIT envelope without a digest in its authentication wrapper.
        public static let suitDigestMissing = Code(kind: .suitDigestMissing)
        /// A key file that is not PEM or DER, or whose key bytes do not parse.
        public static let invalidKey = Code(kind: .invalidKey)
        /// A well-formed key of a type MCUboot does not sign with (e.g. RSA-1024, P-521).
        public static let unsupportedKey = Code(kind: .unsupportedKey)
        /// A file could not be read.
        public static let readFailed = Code(kind: .readFailed)

        public var description: String {
            switch kind {
            case .truncatedHeader: "truncated header"
            case .badMagic: "bad image magic"
            case .invalidHeader: "invalid header"
            case .truncatedImage: "truncated image"
            case .badTLVInfoMagic: "bad TLV info magic"
            case .tlvOutOfBounds: "TLV out of bounds"
            case .tlvAreaMismatch: "TLV area size mismatch"
            case .hashNotFound: "no hash TLV"
            case .unsupportedPackage: "unsupported package"
            case .invalidZip: "invalid zip archive"
            case .manifestMissing: "manifest.json missing"
            case .invalidManifest: "invalid manifest.json"
            case .missingFile: "file missing from package"
            case .invalidSUITEnvelope: "invalid SUIT envelope"
            case .suitDigestMissing: "SUIT envelope has no digest"
            case .invalidKey: "invalid key"
            case .unsupportedKey: "unsupported key"
            case .readFailed: "read failed"
            }
        }
    }

    /// What went wrong.
    public var code: Code
    /// A specific explanation for people (what was expected, what arrived, where).
    public var message: String
    /// The underlying error, e.g. a `CBORError` or a zip library error.
    public var cause: (any Error & Sendable)?

    /// Creates an error.
    /// - Parameters:
    ///   - code: what went wrong.
    ///   - message: a specific explanation.
    ///   - cause: the underlying error, if any.
    public init(_ code: Code, _ message: String = "", cause: (any Error & Sendable)? = nil) {
        self.code = code
        self.message = message
        self.cause = cause
    }

    public var description: String { codedDescription(prefix: "MCUboot: ") }
}
