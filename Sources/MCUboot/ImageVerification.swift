import Crypto
import Foundation
import _CryptoExtras

/// What ``MCUbootImage/verify(publicKey:)`` found: the hash check, the signature check, the
/// features worth knowing about, and what MCUboot will make of the image.
public struct ImageVerification: Sendable, Hashable {
    /// Result of recomputing the image digest.
    public enum HashCheck: Sendable, Hashable, CustomStringConvertible {
        /// The hash TLV equals the digest of header, payload and protected TLVs.
        case valid
        /// The hash TLV differs from the digest: the image was changed after signing.
        case mismatch(expected: [UInt8], computed: [UInt8])
        /// The image has no SHA-256/384/512 TLV.
        case missing
        /// The digest cannot be recomputed here (e.g. the payload is encrypted and the digest covers
        /// the plaintext).
        case notCheckable(String)

        public var description: String {
            switch self {
            case .valid: "ok"
            case .mismatch: "MISMATCH"
            case .missing: "missing"
            case .notCheckable(let why): "not checked (\(why))"
            }
        }
    }

    /// Result of checking the signature.
    public enum SignatureCheck: Sendable, Hashable, CustomStringConvertible {
        /// The signature TLV of this kind verifies with the given key, and KEYHASH/PUBKEY name it.
        case valid(ImageTLV.Kind)
        /// No key was given, but the signature verifies with the PUBKEY TLV embedded in the image.
        case validForEmbeddedKey(ImageTLV.Kind)
        /// A signature for the key's algorithm is present and does not verify.
        case invalid(String)
        /// The image was signed with another key or algorithm than the one given.
        case keyMismatch(String)
        /// The image is signed but nothing was checked (no key given, or encrypted payload).
        case notChecked(String)
        /// The image has no signature TLV.
        case unsigned

        public var description: String {
            switch self {
            case .valid(let kind): "ok (\(kind.name))"
            case .validForEmbeddedKey(let kind): "ok for the embedded public key (\(kind.name)); key not given"
            case .invalid(let why): "BAD (\(why))"
            case .keyMismatch(let why): "wrong key (\(why))"
            case .notChecked(let why): "not checked (\(why))"
            case .unsigned: "unsigned"
            }
        }
    }

    /// What the bootloader will think of the image.
    public enum Verdict: Sendable, Hashable, CustomStringConvertible {
        /// MCUboot will accept it (given a bootloader that trusts the key that was checked).
        case accepted(String)
        /// MCUboot will refuse it (and erase it from the secondary slot).
        case rejected(String)
        /// It depends on how the bootloader was built; the text says on what.
        case depends(String)

        /// Whether the verdict is ``rejected(_:)``.
        public var isRejected: Bool { if case .rejected = self { true } else { false } }

        public var description: String {
            switch self {
            case .accepted(let text): "accepted: \(text)"
            case .rejected(let text): "rejected: \(text)"
            case .depends(let text): "depends on the bootloader: \(text)"
            }
        }
    }

    /// The hash check.
    public var hash: HashCheck
    /// The digest recomputed over the hashed range (`nil` when not checkable).
    public var computedHash: [UInt8]?
    /// The signature check.
    public var signature: SignatureCheck
    /// Features reported instead of failing on them: encryption, compression, RAM load, ROM fixed,
    /// non-bootable, dependencies, security counter, trailer requests, unknown TLVs.
    public var notes: [String]
    /// What MCUboot will make of the image.
    public var verdict: Verdict

    /// Whether the hash TLV matches the image.
    public var isHashValid: Bool { hash == .valid }

    /// Whether the signature verified with the given key.
    public var isSignatureValid: Bool { if case .valid = signature { true } else { false } }
}

extension MCUbootImage {
    /// Recomputes the digest and, with a key, checks KEYHASH/PUBKEY and the signature, the way
    /// MCUboot's `bootutil_img_validate` does.
    ///
    /// Without a key a signed image reports ``ImageVerification/SignatureCheck/notChecked(_:)``
    /// (or checks against an embedded PUBKEY TLV). Encryption, compression, RAM-load, ROM-fixed and
    /// non-bootable images are reported in ``ImageVerification/notes``, never treated as failures.
    /// - Parameter publicKey: the key the bootloader trusts, or `nil`.
    /// - Returns: the report.
    public func verify(publicKey: ImagePublicKey? = nil) -> ImageVerification {
        let flags = header.flags
        let hashCheck: ImageVerification.HashCheck
        var digest: ComputedDigest?
        if flags.isEncrypted {
            hashCheck = .notCheckable("the payload is encrypted; the digest covers the plaintext")
        } else if let hashTLV, let algorithm = ImageHashAlgorithm(kind: hashTLV.kind) {
            let computed = ComputedDigest(algorithm, data[hashedRange])
            digest = computed
            hashCheck =
                computed.bytes == hashTLV.value ? .valid : .mismatch(expected: hashTLV.value, computed: computed.bytes)
        } else {
            hashCheck = .missing
        }

        let signatureCheck = checkSignature(publicKey: publicKey, digest: digest)
        let notes = featureNotes()
        let verdict = Self.verdict(
            hash: hashCheck,
            signature: signatureCheck,
            header: header,
            keyGiven: publicKey != nil
        )
        return ImageVerification(
            hash: hashCheck,
            computedHash: digest?.bytes,
            signature: signatureCheck,
            notes: notes,
            verdict: verdict
        )
    }

    private func checkSignature(publicKey: ImagePublicKey?, digest: ComputedDigest?) -> ImageVerification.SignatureCheck
    {
        let signatures = tlvs.filter { $0.kind.isSignature }
        guard !signatures.isEmpty else { return .unsigned }
        guard let digest else {
            return .notChecked(header.flags.isEncrypted ? "the payload is encrypted" : "the image has no hash TLV")
        }
        guard let publicKey else {
            if let embedded = tlvs.first(where: { $0.kind == .publicKey }),
                let key = try? ImagePublicKey(der: embedded.value)
            {
                let matching = signatures.filter { $0.kind == key.algorithm.signatureKind }
                if let good = matching.first(where: { verifySignature($0, key: key, digest: digest) }) {
                    return .validForEmbeddedKey(good.kind)
                }
                return .invalid("the signature does not verify with the embedded public key")
            }
            return .notChecked("no public key given")
        }

        // KEYHASH (hash of the key, with the image's hash algorithm) or PUBKEY must name this key.
        let keyRecords = tlvs.filter { $0.kind == .keyHash || $0.kind == .publicKey }
        if !keyRecords.isEmpty {
            let named = keyRecords.contains { record in
                if record.kind == .publicKey {
                    return record.value == publicKey.encodedKey || record.value == publicKey.subjectPublicKeyInfo
                }
                guard let algorithm = ImageHashAlgorithm(digestLength: record.value.count) else { return false }
                return record.value == publicKey.keyHash(algorithm)
            }
            if !named {
                let first = keyRecords[0]
                return .keyMismatch(
                    "the image's \(first.kind.name) \(Self.shortHex(first.value)) does not match the given "
                        + "\(publicKey.algorithm) key"
                )
            }
        }
        let matching = signatures.filter { $0.kind == publicKey.algorithm.signatureKind }
        guard !matching.isEmpty else {
            let kinds = signatures.map(\.kind.name).joined(separator: ", ")
            return .keyMismatch("the image is signed with \(kinds), the key is \(publicKey.algorithm)")
        }
        if let good = matching.first(where: { verifySignature($0, key: publicKey, digest: digest) }) {
            return .valid(good.kind)
        }
        return .invalid("\(matching[0].kind.name) does not verify with the given \(publicKey.algorithm) key")
    }

    private func verifySignature(_ record: ImageTLV, key: ImagePublicKey, digest: ComputedDigest) -> Bool {
        let signature = record.value
        switch key.backing {
        case .p256(let publicKey):
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: Self.trimmedDER(signature))
            else { return false }
            return digest.withDigest { publicKey.isValidSignature(parsed, for: $0) }
        case .p384(let publicKey):
            guard let parsed = try? P384.Signing.ECDSASignature(derRepresentation: Self.trimmedDER(signature))
            else { return false }
            return digest.withDigest { publicKey.isValidSignature(parsed, for: $0) }
        case .ed25519(let publicKey):
            if isPureSignature {
                return publicKey.isValidSignature(signature, for: data[hashedRange])
            }
            return publicKey.isValidSignature(signature, for: digest.bytes)
        case .rsa(let publicKey):
            let parsed = _RSA.Signing.RSASignature(rawRepresentation: signature)
            return digest.withDigest { publicKey.isValidSignature(parsed, for: $0, padding: .PSS) }
        }
    }

    /// An ECDSA DER signature without the zero padding `--pad-sig` may append.
    private static func trimmedDER(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.count >= 2, bytes[0] == 0x30 else { return bytes }
        let total: Int
        if bytes[1] < 0x80 {
            total = 2 + Int(bytes[1])
        } else if bytes[1] == 0x81, bytes.count >= 3 {
            total = 3 + Int(bytes[2])
        } else {
            return bytes
        }
        return total <= bytes.count ? Array(bytes.prefix(total)) : bytes
    }

    private func featureNotes() -> [String] {
        var notes: [String] = []
        let flags = header.flags
        let address = "0x" + String(header.loadAddress, radix: 16)
        if header.magic == ImageHeader.legacyMagic { notes.append("legacy v1 header magic 0x96f3b83c") }
        if flags.contains(.encryptedAES128) {
            notes.append("encrypted (AES-128); the bootloader decrypts it with its key")
        }
        if flags.contains(.encryptedAES256) {
            notes.append("encrypted (AES-256); the bootloader decrypts it with its key")
        }
        if flags.isCompressed {
            notes.append("compressed (\(flags.names.filter { $0.hasPrefix("COMPRESSED") }.joined(separator: ", ")))")
        }
        if flags.contains(.ramLoad) { notes.append("RAM load: copied to \(address) before it runs") }
        if flags.contains(.romFixed) {
            notes.append("ROM fixed: runs only from flash address \(address) (DirectXIP slot)")
        }
        if flags.contains(.nonBootable) { notes.append("non-bootable: a data image the bootloader never starts") }
        if flags.contains(.pic) { notes.append("PIC flag set: MCUboot does not support position-independent images") }
        if let counter = securityCounter { notes.append("security counter \(counter)") }
        for dependency in dependencies { notes.append("depends on \(dependency)") }
        let hashes = tlvs.filter { $0.kind.isImageHash }
        if hashes.count > 1 { notes.append("\(hashes.count) hash TLVs; MCUboot expects exactly one") }
        if hashTLV == nil, let protectedHash = protectedTLVs.first(where: { $0.kind.isImageHash }) {
            notes.append("\(protectedHash.kind.name) is in the protected area, where MCUboot does not look for it")
        }
        for record in allTLVs where !record.kind.isKnown {
            let area = record.isProtected ? "protected" : "unprotected"
            let vendor = record.kind.isVendorReserved ? "vendor " : "unknown "
            notes.append(
                "\(vendor)TLV 0x\(String(record.kind.rawValue, radix: 16)) (\(area), \(record.value.count) bytes)"
            )
        }
        if let trailer {
            switch trailer.magic {
            case .good:
                notes.append(
                    trailer.isConfirmed
                        ? "trailer: boot magic + image_ok set (permanent upgrade requested)"
                        : "trailer: boot magic, image_ok unset (test upgrade requested)"
                )
            case .unset: notes.append("padded to 0x\(String(data.count, radix: 16)) bytes; trailer erased")
            case .bad: notes.append("\(trailer.paddingLength) bytes after the TLV area without a valid trailer magic")
            }
        }
        return notes
    }

    private static func verdict(
        hash: ImageVerification.HashCheck,
        signature: ImageVerification.SignatureCheck,
        header: ImageHeader,
        keyGiven: Bool
    ) -> ImageVerification.Verdict {
        switch hash {
        case .mismatch: return .rejected("the hash TLV does not match the image (changed after signing)")
        case .missing: return .rejected("the image has no hash TLV")
        case .valid, .notCheckable: break
        }
        let suffix = header.isBootable ? "" : "; it is marked non-bootable and will not be started"
        switch signature {
        case .invalid(let why): return .rejected("bad signature: \(why)")
        case .keyMismatch(let why): return .rejected("signed with another key: \(why)")
        case .valid:
            if case .notCheckable(let why) = hash { return .depends("signature ok, but \(why)") }
            return .accepted("hash and signature verify; a bootloader that trusts this key boots it" + suffix)
        case .validForEmbeddedKey:
            return .depends(
                "the signature verifies with the embedded public key; accepted if the bootloader trusts that key"
                    + suffix
            )
        case .notChecked(let why):
            if case .notCheckable(let hashWhy) = hash { return .depends("\(hashWhy); signature \(why)") }
            return .depends(
                "hash ok; signature not checked (\(why)): accepted if signed with a key the bootloader trusts" + suffix
            )
        case .unsigned:
            // A bootloader that holds the given key checks signatures: it erases an unsigned image.
            if keyGiven { return .rejected("unsigned, and a bootloader that holds this key requires its signature") }
            if case .notCheckable(let hashWhy) = hash { return .depends(hashWhy) }
            return .depends(
                "hash ok but unsigned: only a bootloader built without signature checks "
                    + "(MCUBOOT_SIGNATURE_TYPE_NONE) accepts it" + suffix
            )
        }
    }

    static func shortHex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef")
        return String(bytes.prefix(4).flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xf)]] }) + "…"
    }
}

/// A digest kept in swift-crypto's typed form, so ECDSA and RSA can verify against it directly.
enum ComputedDigest {
    case sha256(SHA256Digest)
    case sha384(SHA384Digest)
    case sha512(SHA512Digest)

    init(_ algorithm: ImageHashAlgorithm, _ bytes: some DataProtocol) {
        switch algorithm {
        case .sha256: self = .sha256(SHA256.hash(data: bytes))
        case .sha384: self = .sha384(SHA384.hash(data: bytes))
        case .sha512: self = .sha512(SHA512.hash(data: bytes))
        }
    }

    var bytes: [UInt8] {
        switch self {
        case .sha256(let digest): Array(digest)
        case .sha384(let digest): Array(digest)
        case .sha512(let digest): Array(digest)
        }
    }

    func withDigest<R>(_ body: (any Digest) -> R) -> R {
        switch self {
        case .sha256(let digest): body(digest)
        case .sha384(let digest): body(digest)
        case .sha512(let digest): body(digest)
        }
    }
}
