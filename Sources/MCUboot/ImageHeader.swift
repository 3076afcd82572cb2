import SMPBytes

/// The 32-byte header at the start of every MCUboot image (`struct image_header`, little-endian).
///
/// The header is followed by `headerSize − 32` bytes of padding, then the payload
/// (``imageSize`` bytes), then the optional protected TLV area (``protectedTLVSize`` bytes) and
/// the TLV area.
public struct ImageHeader: Sendable, Hashable {
    /// Size of the header structure itself; ``headerSize`` is usually larger (0x200).
    public static let structureSize = 32
    /// `IMAGE_MAGIC` (bytes `3d b8 f3 96`).
    public static let magic: UInt32 = 0x96f3_b83d
    /// `IMAGE_MAGIC_V1`, the legacy magic of images made before MCUboot 1.0.
    public static let legacyMagic: UInt32 = 0x96f3_b83c

    /// Header flags (`ih_flags`). An open set: unknown bits are kept.
    public struct Flags: OptionSet, Sendable, Hashable, CustomStringConvertible {
        public var rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// `IMAGE_F_PIC` (0x01): position independent; not supported by MCUboot.
        public static let pic = Flags(rawValue: 0x01)
        /// `IMAGE_F_ENCRYPTED_AES128` (0x04): the payload is AES-128-CTR encrypted.
        public static let encryptedAES128 = Flags(rawValue: 0x04)
        /// `IMAGE_F_ENCRYPTED_AES256` (0x08): the payload is AES-256-CTR encrypted.
        public static let encryptedAES256 = Flags(rawValue: 0x08)
        /// `IMAGE_F_NON_BOOTABLE` (0x10): a data image the bootloader never jumps to.
        public static let nonBootable = Flags(rawValue: 0x10)
        /// `IMAGE_F_RAM_LOAD` (0x20): copied to RAM at ``ImageHeader/loadAddress`` before it runs.
        public static let ramLoad = Flags(rawValue: 0x20)
        /// `IMAGE_F_ROM_FIXED` (0x100): linked for the flash address in ``ImageHeader/loadAddress``
        /// (DirectXIP: the image only runs from that slot).
        public static let romFixed = Flags(rawValue: 0x100)
        /// `IMAGE_F_COMPRESSED_LZMA1` (0x200).
        public static let compressedLZMA1 = Flags(rawValue: 0x200)
        /// `IMAGE_F_COMPRESSED_LZMA2` (0x400).
        public static let compressedLZMA2 = Flags(rawValue: 0x400)
        /// `IMAGE_F_COMPRESSED_ARM_THUMB_FLT` (0x800): LZMA2 with the ARM Thumb filter.
        public static let compressedARMThumb = Flags(rawValue: 0x800)

        /// Every flag with its imgtool name, in bit order.
        public static let named: [(flag: Flags, name: String)] = [
            (.pic, "PIC"), (.encryptedAES128, "ENCRYPTED_AES128"), (.encryptedAES256, "ENCRYPTED_AES256"),
            (.nonBootable, "NON_BOOTABLE"), (.ramLoad, "RAM_LOAD"), (.romFixed, "ROM_FIXED"),
            (.compressedLZMA1, "COMPRESSED_LZMA1"), (.compressedLZMA2, "COMPRESSED_LZMA2"),
            (.compressedARMThumb, "COMPRESSED_ARM_THUMB"),
        ]

        /// The imgtool names of the set flags; unknown bits appear as hex.
        public var names: [String] {
            var names = Self.named.filter { contains($0.flag) }.map(\.name)
            let known = Self.named.reduce(UInt32(0)) { $0 | $1.flag.rawValue }
            let unknown = rawValue & ~known
            if unknown != 0 { names.append("0x" + String(unknown, radix: 16)) }
            return names
        }

        /// Whether either encryption flag is set.
        public var isEncrypted: Bool { !isDisjoint(with: [.encryptedAES128, .encryptedAES256]) }
        /// Whether any compression flag is set.
        public var isCompressed: Bool { !isDisjoint(with: [.compressedLZMA1, .compressedLZMA2, .compressedARMThumb]) }

        public var description: String { rawValue == 0 ? "0x0" : names.joined(separator: " | ") }
    }

    /// `ih_magic`: ``magic`` or ``legacyMagic``.
    public var magic: UInt32
    /// `ih_load_addr`: the RAM address with ``Flags/ramLoad``, the flash address with ``Flags/romFixed``.
    public var loadAddress: UInt32
    /// `ih_hdr_size`: bytes before the payload (the header plus padding).
    public var headerSize: UInt16
    /// `ih_protect_tlv_size`: size of the protected TLV area including its 4-byte info (0 if none).
    public var protectedTLVSize: UInt16
    /// `ih_img_size`: payload size, excluding the header.
    public var imageSize: UInt32
    /// `ih_flags`.
    public var flags: Flags
    /// `ih_ver`.
    public var version: ImageVersion

    /// Creates a header from its fields.
    public init(
        magic: UInt32 = ImageHeader.magic,
        loadAddress: UInt32 = 0,
        headerSize: UInt16 = 0x200,
        protectedTLVSize: UInt16 = 0,
        imageSize: UInt32,
        flags: Flags = [],
        version: ImageVersion
    ) {
        self.magic = magic
        self.loadAddress = loadAddress
        self.headerSize = headerSize
        self.protectedTLVSize = protectedTLVSize
        self.imageSize = imageSize
        self.flags = flags
        self.version = version
    }

    /// Parses the header at the start of `bytes`.
    /// - Parameter bytes: at least the first 32 bytes of an image.
    /// - Throws: ``MCUbootError`` ``MCUbootError/Code/truncatedHeader`` if fewer than 32 bytes are
    ///   given, ``MCUbootError/Code/badMagic`` for a wrong magic, ``MCUbootError/Code/invalidHeader``
    ///   if `ih_hdr_size` is smaller than 32.
    public init(parsing bytes: some Collection<UInt8>) throws(MCUbootError) {
        let prefix = Array(bytes.prefix(Self.structureSize))
        guard prefix.count == Self.structureSize else {
            throw MCUbootError(.truncatedHeader, "truncated: \(prefix.count) bytes, an image header needs 32")
        }
        var reader = ByteReader(prefix)
        // Every read below is within the 32 bytes checked above.
        let magic = reader.readInteger(endianness: .little, as: UInt32.self) ?? 0
        guard magic == Self.magic || magic == Self.legacyMagic else {
            throw MCUbootError(
                .badMagic,
                "0x\(String(magic, radix: 16)) at offset 0, expected 0x96f3b83d"
                    + (magic == 0xffff_ffff ? " (erased flash)" : "")
            )
        }
        self.magic = magic
        loadAddress = reader.readInteger(endianness: .little) ?? 0
        headerSize = reader.readInteger(endianness: .little) ?? 0
        protectedTLVSize = reader.readInteger(endianness: .little) ?? 0
        imageSize = reader.readInteger(endianness: .little) ?? 0
        flags = Flags(rawValue: reader.readInteger(endianness: .little) ?? 0)
        version = ImageVersion(
            major: reader.readByte() ?? 0,
            minor: reader.readByte() ?? 0,
            revision: reader.readInteger(endianness: .little) ?? 0,
            build: reader.readInteger(endianness: .little) ?? 0
        )
        guard Int(headerSize) >= Self.structureSize else {
            throw MCUbootError(.invalidHeader, "ih_hdr_size 0x\(String(headerSize, radix: 16)) is smaller than 32")
        }
    }

    /// The 32 bytes of the header structure, little-endian, with zero padding.
    public var bytes: [UInt8] {
        var writer = ByteWriter()
        writer.writeInteger(magic, endianness: .little)
        writer.writeInteger(loadAddress, endianness: .little)
        writer.writeInteger(headerSize, endianness: .little)
        writer.writeInteger(protectedTLVSize, endianness: .little)
        writer.writeInteger(imageSize, endianness: .little)
        writer.writeInteger(flags.rawValue, endianness: .little)
        writer.writeInteger(version.major, endianness: .little)
        writer.writeInteger(version.minor, endianness: .little)
        writer.writeInteger(version.revision, endianness: .little)
        writer.writeInteger(version.build, endianness: .little)
        writer.writeInteger(UInt32(0), endianness: .little)
        return writer.bytes
    }

    /// Whether the bootloader may boot this image (no ``Flags/nonBootable``); SMP's `bootable`.
    public var isBootable: Bool { !flags.contains(.nonBootable) }

    /// Offset of the first TLV area (protected if any): `ih_hdr_size + ih_img_size`.
    public var tlvAreaOffset: Int { Int(headerSize) + Int(imageSize) }

    /// Length of the hashed range: header, payload and protected TLV area.
    public var hashedLength: Int { tlvAreaOffset + Int(protectedTLVSize) }
}
