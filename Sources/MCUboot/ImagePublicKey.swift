import Crypto
import Foundation
import _CryptoExtras

/// A key that can check an MCUboot image signature: ECDSA P-256/P-384, Ed25519 or RSA-2048/3072.
///
/// Accepts what users have at hand: a public key (PEM `PUBLIC KEY` / `RSA PUBLIC KEY`, or DER
/// SubjectPublicKeyInfo / PKCS#1) or the private key file `imgtool keygen` wrote (PEM PKCS#8
/// `PRIVATE KEY`, SEC1 `EC PRIVATE KEY`, PKCS#1 `RSA PRIVATE KEY`), whose public half is derived.
/// Encrypted private keys are refused with ``MCUbootError/Code/invalidKey``.
public struct ImagePublicKey: Sendable {
    /// The signature algorithm the key belongs to.
    public enum Algorithm: Sendable, Hashable, CustomStringConvertible {
        /// ECDSA over P-256 (signature TLV 0x22, SHA-256).
        case ecdsaP256
        /// ECDSA over P-384 (signature TLV 0x22, SHA-384).
        case ecdsaP384
        /// Ed25519 (signature TLV 0x24).
        case ed25519
        /// RSA PSS with a modulus of `bits` bits (TLV 0x20 for 2048, 0x23 for 3072).
        case rsa(bits: Int)

        /// The signature TLV kind MCUboot uses for this algorithm.
        public var signatureKind: ImageTLV.Kind {
            switch self {
            case .ecdsaP256, .ecdsaP384: .ecdsaSignature
            case .ed25519: .ed25519
            case .rsa(let bits): bits == 3072 ? .rsa3072PSS : .rsa2048PSS
            }
        }

        public var description: String {
            switch self {
            case .ecdsaP256: "ECDSA P-256"
            case .ecdsaP384: "ECDSA P-384"
            case .ed25519: "Ed25519"
            case .rsa(let bits): "RSA-\(bits)"
            }
        }
    }

    enum Backing: Sendable {
        case p256(P256.Signing.PublicKey)
        case p384(P384.Signing.PublicKey)
        case ed25519(Curve25519.Signing.PublicKey)
        case rsa(_RSA.Signing.PublicKey)
    }

    let backing: Backing
    /// The algorithm.
    public let algorithm: Algorithm
    /// The SubjectPublicKeyInfo DER (what `imgtool getpub -e pem` prints, base64-decoded).
    public let subjectPublicKeyInfo: [UInt8]
    /// The bytes MCUboot's KEYHASH TLV hashes and a PUBKEY TLV holds: the SubjectPublicKeyInfo
    /// for EC and Ed25519 keys, the PKCS#1 `RSAPublicKey` for RSA.
    public let encodedKey: [UInt8]
    /// Whether the key was derived from a private key file.
    public let isFromPrivateKey: Bool

    private static let ed25519SPKIPrefix: [UInt8] = [
        0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
    ]
    private static let ed25519OID: [UInt8] = [0x06, 0x03, 0x2b, 0x65, 0x70]

    /// Reads a key file's contents: PEM text or binary DER.
    /// - Parameter contents: the file's bytes.
    /// - Throws: ``MCUbootError`` ``MCUbootError/Code/invalidKey`` or ``MCUbootError/Code/unsupportedKey``.
    public init(keyFile contents: Data) throws(MCUbootError) {
        if contents.first == 0x30 {
            try self.init(der: Array(contents))
        } else {
            try self.init(pem: String(decoding: contents, as: UTF8.self))
        }
    }

    /// Reads a PEM key: the first `PUBLIC KEY`, `PRIVATE KEY`, `EC PRIVATE KEY`, `RSA PUBLIC KEY`
    /// or `RSA PRIVATE KEY` block (an `EC PARAMETERS` block before it is skipped).
    /// - Parameter pem: the PEM text.
    /// - Throws: ``MCUbootError`` ``MCUbootError/Code/invalidKey`` or ``MCUbootError/Code/unsupportedKey``.
    public init(pem: String) throws(MCUbootError) {
        let block = try Self.pemBlock(pem)
        try self.init(der: block.der)
    }

    /// Reads a DER key: SubjectPublicKeyInfo, PKCS#1 RSA public or private key, PKCS#8 or SEC1
    /// private key.
    /// - Parameter der: the DER bytes.
    /// - Throws: ``MCUbootError`` ``MCUbootError/Code/invalidKey`` or ``MCUbootError/Code/unsupportedKey``.
    public init(der: [UInt8]) throws(MCUbootError) {
        if der.count == 44, Array(der.prefix(12)) == Self.ed25519SPKIPrefix {
            do {
                try self.init(.ed25519(Curve25519.Signing.PublicKey(rawRepresentation: der.suffix(32))), false)
                return
            } catch {
                throw MCUbootError(.invalidKey, "Ed25519 public key does not parse", cause: error)
            }
        }
        if let seed = Self.ed25519PrivateSeed(der) {
            do {
                let key = try Curve25519.Signing.PrivateKey(rawRepresentation: seed)
                self.init(.ed25519(key.publicKey), true)
                return
            } catch {
                throw MCUbootError(.invalidKey, "Ed25519 private key does not parse", cause: error)
            }
        }
        if let key = try? P256.Signing.PublicKey(derRepresentation: der) {
            self.init(.p256(key), false)
        } else if let key = try? P384.Signing.PublicKey(derRepresentation: der) {
            self.init(.p384(key), false)
        } else if let key = try? P256.Signing.PrivateKey(derRepresentation: der) {
            self.init(.p256(key.publicKey), true)
        } else if let key = try? P384.Signing.PrivateKey(derRepresentation: der) {
            self.init(.p384(key.publicKey), true)
        } else if let key = try? _RSA.Signing.PublicKey(unsafeDERRepresentation: der) {
            try Self.checkRSASize(key.keySizeInBits)
            self.init(.rsa(key), false)
        } else if let key = try? _RSA.Signing.PrivateKey(unsafeDERRepresentation: der) {
            try Self.checkRSASize(key.keySizeInBits)
            self.init(.rsa(key.publicKey), true)
        } else {
            let unsupported: [(oid: [UInt8], name: String)] = [
                ([0x2b, 0x81, 0x04, 0x00, 0x23], "P-521"), ([0x2b, 0x81, 0x04, 0x00, 0x21], "P-224"),
                ([0x06, 0x03, 0x2b, 0x65, 0x6e], "X25519"), ([0x06, 0x03, 0x2b, 0x65, 0x71], "Ed448"),
                ([0x2b, 0x24, 0x03, 0x03, 0x02, 0x08, 0x01, 0x01], "Brainpool"),
            ]
            if let match = unsupported.first(where: { der.contains(subsequence: $0.oid) }) {
                throw MCUbootError(
                    .unsupportedKey,
                    "\(match.name) keys cannot sign MCUboot images (use ECDSA P-256/P-384, Ed25519 or RSA-2048/3072)"
                )
            }
            throw MCUbootError(.invalidKey, "not a DER public or private key (\(der.count) bytes)")
        }
    }

    private init(_ backing: Backing, _ fromPrivate: Bool) {
        self.backing = backing
        isFromPrivateKey = fromPrivate
        switch backing {
        case .p256(let key):
            algorithm = .ecdsaP256
            subjectPublicKeyInfo = Array(key.derRepresentation)
            encodedKey = subjectPublicKeyInfo
        case .p384(let key):
            algorithm = .ecdsaP384
            subjectPublicKeyInfo = Array(key.derRepresentation)
            encodedKey = subjectPublicKeyInfo
        case .ed25519(let key):
            algorithm = .ed25519
            subjectPublicKeyInfo = Self.ed25519SPKIPrefix + Array(key.rawRepresentation)
            encodedKey = subjectPublicKeyInfo
        case .rsa(let key):
            algorithm = .rsa(bits: key.keySizeInBits)
            subjectPublicKeyInfo = Array(key.derRepresentation)
            encodedKey = Array(key.pkcs1DERRepresentation)
        }
    }

    /// The KEYHASH value for this key: the digest of ``encodedKey``.
    /// - Parameter algorithm: the image's hash algorithm (imgtool hashes the key with it).
    /// - Returns: the digest.
    public func keyHash(_ algorithm: ImageHashAlgorithm = .sha256) -> [UInt8] {
        algorithm.hash(encodedKey)
    }

    private static func checkRSASize(_ bits: Int) throws(MCUbootError) {
        guard bits == 2048 || bits == 3072 else {
            throw MCUbootError(.unsupportedKey, "RSA-\(bits): MCUboot signs with RSA-2048 or RSA-3072 only")
        }
    }

    /// The 32-byte seed of a PKCS#8 Ed25519 private key (v1 or v2), or `nil` if `der` is not one.
    private static func ed25519PrivateSeed(_ der: [UInt8]) -> [UInt8]? {
        guard der.count >= 48, der[0] == 0x30,
            let oid = der.firstRange(of: ed25519OID), oid.lowerBound < 16
        else { return nil }
        let rest = der[oid.upperBound...]
        guard let octets = rest.firstRange(of: [0x04, 0x22, 0x04, 0x20]),
            octets.upperBound + 32 <= der.count
        else { return nil }
        return Array(der[octets.upperBound..<octets.upperBound + 32])
    }

    // MARK: - PEM

    private static let keyLabels: Set<String> = [
        "PUBLIC KEY", "PRIVATE KEY", "EC PRIVATE KEY", "RSA PUBLIC KEY", "RSA PRIVATE KEY",
    ]

    private static func pemBlock(_ text: String) throws(MCUbootError) -> (label: String, der: [UInt8]) {
        var label: String?
        var body = ""
        var sawEncrypted = false
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmingSpaces()
            if line.hasPrefix("-----BEGIN "), line.hasSuffix("-----") {
                let name = String(line.dropFirst(11).dropLast(5))
                if name == "ENCRYPTED PRIVATE KEY" { sawEncrypted = true }
                if label == nil, keyLabels.contains(name) {
                    label = name
                    body = ""
                }
                continue
            }
            if line.hasPrefix("-----END ") {
                if let label, line == "-----END \(label)-----" {
                    guard let der = Data(base64Encoded: body), !der.isEmpty else {
                        throw MCUbootError(.invalidKey, "the \(label) block is not valid base64")
                    }
                    return (label, Array(der))
                }
                continue
            }
            if label != nil {
                if line.contains(":") {
                    // RFC 1421 headers such as "Proc-Type: 4,ENCRYPTED" mean a passphrase-protected key.
                    if line.contains("ENCRYPTED") { sawEncrypted = true }
                    continue
                }
                body += line
            }
        }
        if sawEncrypted {
            throw MCUbootError(
                .invalidKey,
                "the private key is encrypted; export the public key with `imgtool getpub -e pem`"
            )
        }
        if label != nil {
            throw MCUbootError(.invalidKey, "PEM block has no END line")
        }
        throw MCUbootError(.invalidKey, "no PEM key block (BEGIN PUBLIC KEY or BEGIN PRIVATE KEY) found")
    }
}

extension Array where Element == UInt8 {
    /// Whether `pattern` occurs somewhere in the array.
    func contains(subsequence pattern: [UInt8]) -> Bool { firstRange(of: pattern) != nil }
}
