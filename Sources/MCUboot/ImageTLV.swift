/// One type-length-value record from an image's protected or unprotected TLV area.
///
/// On disk: `u16 type`, `u16 len` (little-endian), then `len` bytes. Unknown types are kept,
/// never rejected: MCUboot reserves `xxA0–xxFF` of each upper byte for vendors.
public struct ImageTLV: Sendable, Hashable, CustomStringConvertible {
    /// A TLV type (`IMAGE_TLV_*`). An open set: any `UInt16` is a valid kind.
    public struct Kind: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
        public var rawValue: UInt16
        public init(rawValue: UInt16) { self.rawValue = rawValue }
        /// Creates a kind from its number.
        public init(_ rawValue: UInt16) { self.rawValue = rawValue }

        /// 0x01: hash of the public key that signed the image.
        public static let keyHash = Kind(0x01)
        /// 0x02: the full public key (images for hardware-key bootloaders).
        public static let publicKey = Kind(0x02)
        /// 0x10: SHA-256 of header, payload and protected TLVs.
        public static let sha256 = Kind(0x10)
        /// 0x11: SHA-384 image digest.
        public static let sha384 = Kind(0x11)
        /// 0x12: SHA-512 image digest.
        public static let sha512 = Kind(0x12)
        /// 0x20: RSA-2048 PSS signature.
        public static let rsa2048PSS = Kind(0x20)
        /// 0x21: ECDSA P-224 signature (obsolete).
        public static let ecdsa224 = Kind(0x21)
        /// 0x22: ECDSA P-256 or P-384 signature, ASN.1 DER.
        public static let ecdsaSignature = Kind(0x22)
        /// 0x23: RSA-3072 PSS signature.
        public static let rsa3072PSS = Kind(0x23)
        /// 0x24: Ed25519 signature.
        public static let ed25519 = Kind(0x24)
        /// 0x25: the signature covers the image itself, not its digest ("pure").
        public static let signaturePure = Kind(0x25)
        /// 0x30: AES key wrapped with RSA-OAEP.
        public static let encRSA2048 = Kind(0x30)
        /// 0x31: AES key wrapped with AES-KW.
        public static let encKW = Kind(0x31)
        /// 0x32: AES key from ECIES-P256.
        public static let encEC256 = Kind(0x32)
        /// 0x33: AES key from ECIES-X25519.
        public static let encX25519 = Kind(0x33)
        /// 0x34: AES key from ECIES-X25519 with SHA-512.
        public static let encX25519SHA512 = Kind(0x34)
        /// 0x40: dependency on another image's version (protected).
        public static let dependency = Kind(0x40)
        /// 0x50: security counter (protected).
        public static let securityCounter = Kind(0x50)
        /// 0x60: CBOR measured-boot record.
        public static let bootRecord = Kind(0x60)
        /// 0x70: size of the decompressed image.
        public static let decompressedSize = Kind(0x70)
        /// 0x71: hash of the decompressed image.
        public static let decompressedSHA = Kind(0x71)
        /// 0x72: signature of the decompressed image.
        public static let decompressedSignature = Kind(0x72)
        /// 0x73: size of the compressed, decrypted image.
        public static let compressedDecryptedSize = Kind(0x73)
        /// 0x74: vendor UUID.
        public static let vendorUUID = Kind(0x74)
        /// 0x75: class UUID.
        public static let classUUID = Kind(0x75)

        private static let names: [UInt16: String] = [
            0x01: "KEYHASH", 0x02: "PUBKEY", 0x10: "SHA256", 0x11: "SHA384", 0x12: "SHA512",
            0x20: "RSA2048", 0x21: "ECDSA224", 0x22: "ECDSASIG", 0x23: "RSA3072", 0x24: "ED25519",
            0x25: "SIG_PURE", 0x30: "ENCRSA2048", 0x31: "ENCKW", 0x32: "ENCEC256", 0x33: "ENCX25519",
            0x34: "ENCX25519_SHA512", 0x40: "DEPENDENCY", 0x50: "SEC_CNT", 0x60: "BOOT_RECORD",
            0x70: "DECOMP_SIZE", 0x71: "DECOMP_SHA", 0x72: "DECOMP_SIGNATURE", 0x73: "COMP_DEC_SIZE",
            0x74: "UUID_VID", 0x75: "UUID_CID",
        ]

        /// The name imgtool's `dumpinfo` prints (`SHA256`, `ECDSASIG`, …); `UNKNOWN` for other types.
        public var name: String { Self.names[rawValue] ?? "UNKNOWN" }

        /// Whether the type is a known MCUboot type (not vendor-defined or unassigned).
        public var isKnown: Bool { Self.names[rawValue] != nil }

        /// Whether the type lies in a vendor-reserved range (`xxA0`–`xxFF`).
        public var isVendorReserved: Bool { rawValue & 0xff >= 0xa0 }

        /// Whether the record is an image digest (SHA-256/384/512).
        public var isImageHash: Bool { self == .sha256 || self == .sha384 || self == .sha512 }

        /// Whether the record is a signature MCUboot can check.
        public var isSignature: Bool {
            self == .rsa2048PSS || self == .ecdsaSignature || self == .rsa3072PSS || self == .ed25519
                || self == .ecdsa224
        }

        /// `NAME (0xNN)`, as dumpinfo prints it.
        public var description: String { "\(name) (0x\(String(rawValue, radix: 16)))" }

        public static func < (lhs: Kind, rhs: Kind) -> Bool { lhs.rawValue < rhs.rawValue }
    }

    /// The record's type.
    public var kind: Kind
    /// The record's data (`len` bytes).
    public var value: [UInt8]
    /// Offset of the record's 4-byte type/length header within the image.
    public var offset: Int
    /// Whether the record is in the protected area (covered by the image hash and signature).
    public var isProtected: Bool

    /// Creates a record.
    /// - Parameters:
    ///   - kind: the type.
    ///   - value: the data.
    ///   - offset: where its header starts in the image.
    ///   - isProtected: whether it lies in the protected area.
    public init(kind: Kind, value: [UInt8], offset: Int = 0, isProtected: Bool = false) {
        self.kind = kind
        self.value = value
        self.offset = offset
        self.isProtected = isProtected
    }

    public var description: String { "\(kind) len: 0x\(String(value.count, radix: 16))" }
}

/// A dependency of one image on another image's minimum version (protected TLV 0x40).
public struct ImageDependency: Sendable, Hashable, CustomStringConvertible {
    /// The image number the dependency names.
    public var imageIndex: UInt8
    /// The minimum version that image must have.
    public var minimumVersion: ImageVersion

    /// Creates a dependency.
    public init(imageIndex: UInt8, minimumVersion: ImageVersion) {
        self.imageIndex = imageIndex
        self.minimumVersion = minimumVersion
    }

    /// Parses the 12-byte TLV value `u8 image_id, u8 pad, u16 pad, image_version`.
    /// - Parameter value: the TLV data.
    /// - Returns: `nil` if the value is not 12 bytes long.
    public init?(tlvValue value: [UInt8]) {
        guard value.count == 12 else { return nil }
        func le<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
            (0..<MemoryLayout<T>.size).reversed().reduce(T(0)) { $0 << 8 | T(value[at + $1]) }
        }
        imageIndex = value[0]
        minimumVersion = ImageVersion(
            major: value[4],
            minor: value[5],
            revision: le(6, UInt16.self),
            build: le(8, UInt32.self)
        )
    }

    public var description: String { "image \(imageIndex) ≥ \(minimumVersion)" }
}
