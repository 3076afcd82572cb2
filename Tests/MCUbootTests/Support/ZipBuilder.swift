import Foundation
import MCUboot

/// Writes small zip archives (stored, no compression) so tests control every byte: names with
/// spaces, subfolders, missing files, broken archives.
struct ZipBuilder {
    private var body: [UInt8] = []
    private var central: [UInt8] = []
    private var count = 0

    /// Adds an entry.
    /// - Parameters:
    ///   - path: the entry's name.
    ///   - bytes: its contents.
    ///   - declaredSize: the uncompressed size the headers declare, when it must differ from the
    ///     contents (the central directory's only, unless `deflated`).
    ///   - deflated: store the contents as one uncompressed deflate block (method 8), the way a
    ///     deflated entry's declared size can differ from what it inflates to.
    mutating func add(
        _ path: String,
        _ bytes: some Collection<UInt8>,
        declaredSize: UInt32? = nil,
        deflated: Bool = false
    ) {
        let name = Array(path.utf8)
        let data = Array(bytes)
        let crc = Self.crc32(data)
        let offset = UInt32(body.count)
        let length = UInt16(data.count)
        let stored = deflated ? [0x01] + Self.le16(length) + Self.le16(~length) + data : data
        let method: UInt16 = deflated ? 8 : 0
        let sizes = Self.le32(UInt32(stored.count)) + Self.le32(declaredSize ?? UInt32(data.count))
        // Local file header.
        body +=
            Self.le32(0x0403_4b50) + Self.le16(20) + Self.le16(0) + Self.le16(method) + Self.le16(0) + Self.le16(0x21)
        body += Self.le32(crc) + (deflated ? sizes : Self.le32(UInt32(data.count)) + Self.le32(UInt32(data.count)))
        body += Self.le16(UInt16(name.count)) + Self.le16(0) + name + stored
        // Central directory record.
        central += Self.le32(0x0201_4b50) + Self.le16(0x031e) + Self.le16(20) + Self.le16(0) + Self.le16(method)
        central += Self.le16(0) + Self.le16(0x21) + Self.le32(crc) + sizes
        central += Self.le16(UInt16(name.count)) + Self.le16(0)
        central += Self.le16(0)
        central += Self.le16(0) + Self.le16(0) + Self.le32(0o100644 << 16) + Self.le32(offset) + name
        count += 1
    }

    mutating func add(_ path: String, text: String) { add(path, Array(text.utf8)) }

    var bytes: [UInt8] {
        let end =
            Self.le32(0x0605_4b50) + Self.le16(0) + Self.le16(0) + Self.le16(UInt16(count)) + Self.le16(UInt16(count))
            + Self.le32(UInt32(central.count)) + Self.le32(UInt32(body.count)) + Self.le16(0)
        return body + central + end
    }

    var data: Data { Data(bytes) }

    private static func le16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xff), UInt8(value >> 8)] }
    private static func le32(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
    }

    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xedb8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(UInt32(0xffff_ffff)) { table[Int(($0 ^ UInt32($1)) & 0xff)] ^ ($0 >> 8) }
    }
}

/// Just enough CBOR encoding to hand-build SUIT envelopes in tests.
enum TestCBOR {
    static func head(_ major: UInt8, _ value: Int) -> [UInt8] {
        switch value {
        case 0..<24: [major << 5 | UInt8(value)]
        case 24..<256: [major << 5 | 24, UInt8(value)]
        case 256..<65536: [major << 5 | 25, UInt8(value >> 8), UInt8(value & 0xff)]
        default: [major << 5 | 26] + (0..<4).reversed().map { UInt8(truncatingIfNeeded: value >> ($0 * 8)) }
        }
    }
    static func int(_ value: Int) -> [UInt8] { value >= 0 ? head(0, value) : head(1, -1 - value) }
    static func bytes(_ value: [UInt8]) -> [UInt8] { head(2, value.count) + value }
    static func text(_ value: String) -> [UInt8] { head(3, value.utf8.count) + Array(value.utf8) }
    static func array(_ items: [[UInt8]]) -> [UInt8] { head(4, items.count) + items.flatMap { $0 } }
    static func map(_ pairs: [([UInt8], [UInt8])]) -> [UInt8] { head(5, pairs.count) + pairs.flatMap { $0.0 + $0.1 } }
    static func tag(_ tag: Int, _ item: [UInt8]) -> [UInt8] { head(6, tag) + item }

    /// A SUIT envelope whose manifest has `sequence` and whose wrapper holds the SHA-256 digest
    /// of the bstr-wrapped manifest (or `digest` when given, to make a wrong one).
    static func envelope(sequence: Int, digest: [UInt8]? = nil, payloads: [(String, [UInt8])] = []) -> (
        bytes: [UInt8], digest: [UInt8]
    ) {
        let manifest = map([(int(1), int(1)), (int(2), int(sequence))])
        let wrapped = bytes(manifest)
        let computed = sha256(wrapped)
        let value = digest ?? computed
        let wrapper = array([bytes(array([int(-16), bytes(value)]))])
        var pairs = [(int(2), bytes(wrapper)), (int(3), wrapped)]
        pairs += payloads.map { (text($0.0), bytes($0.1)) }
        return (tag(107, map(pairs)), value)
    }

    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        ImageHashAlgorithm.sha256.hash(bytes)
    }
}
