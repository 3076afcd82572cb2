import Crypto
import Foundation
import SMPBytes

/// The digest algorithm of an image's hash TLV.
public enum ImageHashAlgorithm: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// SHA-256 (TLV 0x10), the default.
    case sha256 = "SHA-256"
    /// SHA-384 (TLV 0x11), used with ECDSA P-384.
    case sha384 = "SHA-384"
    /// SHA-512 (TLV 0x12), used with pure Ed25519.
    case sha512 = "SHA-512"

    /// The algorithm whose digest has `length` bytes (32, 48 or 64).
    public init?(digestLength length: Int) {
        switch length {
        case 32: self = .sha256
        case 48: self = .sha384
        case 64: self = .sha512
        default: return nil
        }
    }

    /// The algorithm of a hash TLV kind.
    public init?(kind: ImageTLV.Kind) {
        switch kind {
        case .sha256: self = .sha256
        case .sha384: self = .sha384
        case .sha512: self = .sha512
        default: return nil
        }
    }

    /// Bytes in a digest.
    public var digestLength: Int {
        switch self {
        case .sha256: 32
        case .sha384: 48
        case .sha512: 64
        }
    }

    /// The TLV kind that carries this digest.
    public var tlvKind: ImageTLV.Kind {
        switch self {
        case .sha256: .sha256
        case .sha384: .sha384
        case .sha512: .sha512
        }
    }

    /// Hashes bytes.
    /// - Parameter bytes: the bytes (a `Data` slice is hashed in place, without a copy).
    /// - Returns: the digest.
    public func hash(_ bytes: some DataProtocol) -> [UInt8] {
        switch self {
        case .sha256: Array(SHA256.hash(data: bytes))
        case .sha384: Array(SHA384.hash(data: bytes))
        case .sha512: Array(SHA512.hash(data: bytes))
        }
    }

    public var description: String { rawValue }
}

/// A parsed MCUboot image: header, protected and unprotected TLV areas and, for padded images,
/// the trailer.
///
/// Parsing is strict about structure (every offset and length is bounds-checked, all fields
/// are little-endian) and lenient about content: unknown TLV types, encryption, compression,
/// RAM-load and similar features are reported, not rejected. The image bytes are kept once, as
/// given; hashing and signature checks work on slices of them.
///
/// ```swift
/// let image = try MCUbootImage(Data(contentsOf: url))
/// print(image.header.version, Hex.encode(image.hash ?? []))
/// let report = image.verify(publicKey: try ImagePublicKey(pem: keyText))
/// ```
public struct MCUbootImage: Sendable {
    /// The image file as given, including any padding and trailer.
    public let data: Data
    /// The header.
    public let header: ImageHeader
    /// TLVs of the protected area (info magic 0x6908), in file order; covered by the hash.
    public let protectedTLVs: [ImageTLV]
    /// TLVs of the unprotected area (info magic 0x6907), in file order.
    public let tlvs: [ImageTLV]
    /// Byte range of the protected TLV area, info header included; `nil` when there is none.
    public let protectedTLVArea: Range<Int>?
    /// Byte range of the unprotected TLV area, info header included.
    public let tlvArea: Range<Int>
    /// The trailer, when bytes follow the TLV area (a padded image); `nil` otherwise.
    public let trailer: ImageTrailer?

    /// Parses an image.
    /// - Parameter data: the image file.
    /// - Throws: ``MCUbootError`` with a specific code for each structural problem:
    ///   ``MCUbootError/Code/truncatedHeader``, ``MCUbootError/Code/badMagic``,
    ///   ``MCUbootError/Code/invalidHeader``, ``MCUbootError/Code/truncatedImage``,
    ///   ``MCUbootError/Code/badTLVInfoMagic``, ``MCUbootError/Code/tlvOutOfBounds``,
    ///   ``MCUbootError/Code/tlvAreaMismatch``.
    public init(_ data: Data) throws(MCUbootError) {
        // Work with zero-based offsets whatever slice was passed in.
        let data = data.startIndex == 0 ? data : Data(data)
        self.data = data
        let header = try ImageHeader(parsing: data.prefix(ImageHeader.structureSize))
        self.header = header
        guard data.count >= Int(header.headerSize) else {
            throw MCUbootError(
                .truncatedHeader,
                "truncated: ih_hdr_size is 0x\(String(header.headerSize, radix: 16)) but the file has only \(data.count) bytes"
            )
        }
        var offset = header.tlvAreaOffset
        guard offset <= data.count else {
            throw MCUbootError(
                .truncatedImage,
                "truncated: the payload ends at 0x\(String(offset, radix: 16)) (ih_hdr_size + ih_img_size) but the file has "
                    + "0x\(String(data.count, radix: 16)) bytes"
            )
        }
        let firstMagic = Self.areaInfo(in: data, at: offset)?.magic
        if header.protectedTLVSize > 0 {
            let area = try Self.readArea(
                in: data,
                at: offset,
                magic: Self.protectedInfoMagic,
                expectedTotal: Int(header.protectedTLVSize),
                isProtected: true
            )
            protectedTLVs = area.tlvs
            protectedTLVArea = area.range
            offset = area.range.upperBound
        } else {
            if firstMagic == Self.protectedInfoMagic {
                throw MCUbootError(
                    .tlvAreaMismatch,
                    "a protected TLV area (0x6908) follows the payload at 0x\(String(offset, radix: 16)) but "
                        + "ih_protect_tlv_size is 0"
                )
            }
            protectedTLVs = []
            protectedTLVArea = nil
        }
        let area = try Self.readArea(
            in: data,
            at: offset,
            magic: Self.infoMagic,
            expectedTotal: nil,
            isProtected: false
        )
        tlvs = area.tlvs
        tlvArea = area.range
        trailer = ImageTrailer(in: data, imageEnd: area.range.upperBound)
    }

    /// Parses an image from bytes.
    /// - Parameter bytes: the image file.
    /// - Throws: ``MCUbootError`` as ``init(_:)``.
    public init(bytes: [UInt8]) throws(MCUbootError) {
        try self.init(Data(bytes))
    }

    // MARK: - Derived facts

    /// Every TLV, protected first, in file order.
    public var allTLVs: [ImageTLV] { protectedTLVs + tlvs }

    /// The first TLV of a kind (unprotected area first, then protected).
    /// - Parameter kind: the TLV type.
    /// - Returns: the record, or `nil`.
    public func tlv(_ kind: ImageTLV.Kind) -> ImageTLV? {
        tlvs.first { $0.kind == kind } ?? protectedTLVs.first { $0.kind == kind }
    }

    /// The image hash record (SHA-256/384/512) from the unprotected area, as MCUboot looks it up.
    public var hashTLV: ImageTLV? { tlvs.first { $0.kind.isImageHash } }

    /// The image hash: the value of the hash TLV. This is the `hash` SMP `image list` reports and
    /// the value `image test`/`confirm` take. `nil` if the image has no hash TLV.
    public var hash: [UInt8]? { hashTLV?.value }

    /// The algorithm of the hash TLV.
    public var hashAlgorithm: ImageHashAlgorithm? { hashTLV.flatMap { ImageHashAlgorithm(kind: $0.kind) } }

    /// Bytes covered by the hash and signature: header, payload and protected TLV area.
    public var hashedRange: Range<Int> { 0..<header.hashedLength }

    /// Length of the image proper (up to the end of the TLV area); less than `data.count` when padded.
    public var imageLength: Int { tlvArea.upperBound }

    /// The security counter from the protected SEC_CNT TLV (0x50), if any.
    public var securityCounter: UInt32? {
        guard let value = protectedTLVs.first(where: { $0.kind == .securityCounter })?.value, value.count == 4
        else { return nil }
        return value.reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    }

    /// The dependencies from protected DEPENDENCY TLVs (0x40).
    public var dependencies: [ImageDependency] {
        protectedTLVs.filter { $0.kind == .dependency }.compactMap { ImageDependency(tlvValue: $0.value) }
    }

    /// Whether the image is signed "pure" (TLV 0x25): the signature covers the image, not its digest.
    public var isPureSignature: Bool { tlvs.contains { $0.kind == .signaturePure } }

    /// Recomputes the digest over header, payload and protected TLVs.
    /// - Parameter algorithm: the algorithm; by default that of the hash TLV (SHA-256 if none).
    /// - Returns: the digest.
    public func computeHash(algorithm: ImageHashAlgorithm? = nil) -> [UInt8] {
        (algorithm ?? hashAlgorithm ?? .sha256).hash(data[hashedRange])
    }

    // MARK: - Parsing

    static let infoMagic: UInt16 = 0x6907
    static let protectedInfoMagic: UInt16 = 0x6908

    private static func areaInfo(in data: Data, at offset: Int) -> (magic: UInt16, total: UInt16)? {
        guard offset >= 0, offset + 4 <= data.count else { return nil }
        let reader = ByteReader(data[offset..<offset + 4])
        guard let magic = reader.getInteger(at: 0, endianness: .little, as: UInt16.self),
            let total = reader.getInteger(at: 2, endianness: .little, as: UInt16.self)
        else { return nil }
        return (magic, total)
    }

    private static func readArea(
        in data: Data,
        at offset: Int,
        magic expectedMagic: UInt16,
        expectedTotal: Int?,
        isProtected: Bool
    ) throws(MCUbootError) -> (tlvs: [ImageTLV], range: Range<Int>) {
        let name = isProtected ? "protected TLV area" : "TLV area"
        let hexOffset = "0x" + String(offset, radix: 16)
        guard let info = areaInfo(in: data, at: offset) else {
            throw MCUbootError(
                .truncatedImage,
                "truncated: the file ends at 0x\(String(data.count, radix: 16)) before the \(name) info at \(hexOffset)"
            )
        }
        guard info.magic == expectedMagic else {
            throw MCUbootError(
                .badTLVInfoMagic,
                "\(name) at \(hexOffset) starts with 0x\(String(info.magic, radix: 16)), "
                    + "expected 0x\(String(expectedMagic, radix: 16))"
            )
        }
        let total = Int(info.total)
        if let expectedTotal, expectedTotal != total {
            throw MCUbootError(
                .tlvAreaMismatch,
                "\(name) total is 0x\(String(total, radix: 16)) but ih_protect_tlv_size is "
                    + "0x\(String(expectedTotal, radix: 16))"
            )
        }
        guard total >= 4 else {
            throw MCUbootError(.tlvAreaMismatch, "\(name) total 0x\(String(total, radix: 16)) is smaller than its info")
        }
        let end = offset + total
        guard end <= data.count else {
            throw MCUbootError(
                .truncatedImage,
                "truncated: the \(name) at \(hexOffset) declares 0x\(String(total, radix: 16)) bytes but the file ends at "
                    + "0x\(String(data.count, radix: 16))"
            )
        }
        let reader = ByteReader(data[offset..<end])
        var tlvs: [ImageTLV] = []
        var position = 4
        while position < total {
            guard let type = reader.getInteger(at: position, endianness: .little, as: UInt16.self),
                let length = reader.getInteger(at: position + 2, endianness: .little, as: UInt16.self)
            else {
                throw MCUbootError(
                    .tlvAreaMismatch,
                    "\(name) total 0x\(String(total, radix: 16)) leaves \(total - position) stray bytes at "
                        + "0x\(String(offset + position, radix: 16)), too few for a TLV header"
                )
            }
            let valueStart = position + 4
            let valueEnd = valueStart + Int(length)
            guard offset + valueEnd <= data.count else {
                throw MCUbootError(
                    .tlvOutOfBounds,
                    "TLV 0x\(String(type, radix: 16)) at 0x\(String(offset + position, radix: 16)) has length "
                        + "0x\(String(length, radix: 16)), past the end of the file at 0x\(String(data.count, radix: 16))"
                )
            }
            guard valueEnd <= total else {
                throw MCUbootError(
                    .tlvAreaMismatch,
                    "TLV 0x\(String(type, radix: 16)) at 0x\(String(offset + position, radix: 16)) ends at "
                        + "0x\(String(offset + valueEnd, radix: 16)), past the \(name) total "
                        + "0x\(String(total, radix: 16)) (which ends at 0x\(String(end, radix: 16)))"
                )
            }
            tlvs.append(
                ImageTLV(
                    kind: ImageTLV.Kind(type),
                    value: Array(reader.bytes[valueStart..<valueEnd]),
                    offset: offset + position,
                    isProtected: isProtected
                )
            )
            position = valueEnd
        }
        return (tlvs, offset..<end)
    }
}
