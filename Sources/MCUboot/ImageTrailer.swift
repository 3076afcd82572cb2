/// The image trailer found at the end of a padded image (imgtool `--pad`, or a slot read back).
///
/// MCUboot reads it from the end of the slot backwards: a 16-byte magic, then `image_ok`,
/// `copy_done` and `swap_info` (each padded to the maximum write alignment) and `swap_size`.
/// imgtool `--pad` writes the magic (a "test" request); `--pad --confirm` also sets `image_ok`.
public struct ImageTrailer: Sendable, Hashable {
    /// The 16-byte boot magic for `BOOT_MAX_ALIGN` 8.
    public static let bootMagic: [UInt8] = [
        0x77, 0xc2, 0x95, 0xf3, 0x60, 0xd2, 0xef, 0x7f, 0x35, 0x52, 0x50, 0x0f, 0x2c, 0xb6, 0x79, 0x80,
    ]
    /// The last 14 bytes of the boot magic for other alignments (the first two hold the alignment).
    public static let bootMagicAlignedSuffix: [UInt8] = [
        0x2d, 0xe1, 0x5d, 0x29, 0x41, 0x0b, 0x8d, 0x77, 0x67, 0x9c, 0x11, 0x0f, 0x1f, 0x8a,
    ]

    /// What the last 16 bytes hold.
    public enum MagicState: Sendable, Hashable, CustomStringConvertible {
        /// A valid boot magic: the bootloader will look at this slot's flags.
        case good
        /// Erased flash (all 0xff): no swap requested.
        case unset
        /// Anything else.
        case bad

        public var description: String {
            switch self {
            case .good: "good"
            case .unset: "unset"
            case .bad: "bad"
            }
        }
    }

    /// The trailer magic.
    public var magic: MagicState
    /// The maximum write alignment the magic encodes (8 for the classic magic); `nil` unless good.
    public var maxAlign: Int?
    /// `image_ok`: 0x01 set (confirmed), 0xff unset; `nil` if the magic is not good.
    public var imageOK: UInt8?
    /// `copy_done`: 0x01 set, 0xff unset; `nil` if the magic is not good.
    public var copyDone: UInt8?
    /// `swap_info`: swap type in bits 0–3, image number in bits 4–7; 0xff unset.
    public var swapInfo: UInt8?
    /// `swap_size`, 0xffffffff when unset.
    public var swapSize: UInt32?
    /// Bytes between the end of the TLV area and the end of the file.
    public var paddingLength: Int

    /// Whether `image_ok` is set: with a good magic in the secondary slot this asks for a
    /// permanent swap; otherwise a good magic alone asks for a test swap.
    public var isConfirmed: Bool { magic == .good && imageOK == 0x01 }

    /// Whether the trailer requests an upgrade at all (a good magic).
    public var requestsSwap: Bool { magic == .good }

    /// Reads the trailer at the end of `bytes`, after an image whose TLV area ends at `imageEnd`.
    /// - Parameters:
    ///   - bytes: the whole file.
    ///   - imageEnd: offset just past the TLV area.
    /// - Returns: `nil` when nothing follows the image.
    init?(in bytes: some RandomAccessCollection<UInt8>, imageEnd: Int) {
        let count = bytes.count
        guard count > imageEnd else { return nil }
        paddingLength = count - imageEnd
        func byte(_ offset: Int) -> UInt8 { bytes[bytes.index(bytes.startIndex, offsetBy: offset)] }
        guard paddingLength >= Self.bootMagic.count else {
            magic = .bad
            return
        }
        let magicStart = count - Self.bootMagic.count
        let tail = (magicStart..<count).map(byte)
        let align: Int
        if tail == Self.bootMagic {
            align = 8
        } else if Array(tail[2...]) == Self.bootMagicAlignedSuffix {
            align = Int(tail[0]) | Int(tail[1]) << 8
        } else {
            magic = tail.allSatisfy { $0 == 0xff } ? .unset : .bad
            return
        }
        magic = .good
        guard align > 0, align <= 1024 else { return }
        maxAlign = align
        var offset = magicStart - max(0, align - Self.bootMagic.count)
        offset -= align
        guard offset >= imageEnd else { return }
        imageOK = byte(offset)
        offset -= align
        guard offset >= imageEnd else { return }
        copyDone = byte(offset)
        offset -= align
        guard offset >= imageEnd else { return }
        swapInfo = byte(offset)
        offset -= align
        guard offset >= imageEnd, offset + 4 <= count else { return }
        swapSize = (0..<4).reversed().reduce(UInt32(0)) { $0 << 8 | UInt32(byte(offset + $1)) }
    }

    /// Describes a trailer flag byte the way people read it: `set`, `unset` or its hex value.
    public static func describeFlag(_ value: UInt8?) -> String {
        switch value {
        case nil: "n/a"
        case 0x01: "set"
        case 0xff: "unset"
        case let value?: "0x" + String(value, radix: 16)
        }
    }
}
