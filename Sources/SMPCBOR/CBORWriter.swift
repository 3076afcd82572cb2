import Foundation
import SMPBytes

/// Encodes CBOR items to bytes.
///
/// Output is deterministic: integers, lengths and tags use their shortest form, strings, arrays
/// and maps have definite lengths, and map entries keep their order unless
/// ``Options/mapKeyOrder`` asks for sorted keys. Floats keep their ``CBORFloat/width``.
///
/// The `writeIndefinite…`/``writeBreak()`` calls exist for peers that must emit what Zephyr's
/// zcbor emits (indefinite-length maps); the simulator uses them.
public struct CBORWriter: Sendable {
    /// How values are written.
    public struct Options: Sendable, Hashable {
        /// The order map entries are written in.
        public enum MapKeyOrder: Sendable, Hashable {
            /// The order the entries were added (synthesised Codable: declaration order).
            case insertion
            /// Sorted by the bytes of the encoded keys: RFC 8949 §4.2.1 core deterministic encoding.
            case bytewise
            /// Shorter encoded keys first, then bytewise: RFC 8949 §4.2.3 (RFC 7049's "canonical
            /// CBOR"), which is what `cbor2.dumps(canonical=True)` and so the `smp` package emit.
            case lengthFirst
        }

        /// The order map entries are written in.
        public var mapKeyOrder: MapKeyOrder

        /// Creates options.
        /// - Parameter mapKeyOrder: the order map entries are written in.
        public init(mapKeyOrder: MapKeyOrder = .insertion) {
            self.mapKeyOrder = mapKeyOrder
        }

        /// Creates options for RFC 8949 §4.2.1 sorted maps, or insertion order.
        /// - Parameter canonical: sort map keys bytewise by their encoding. For the short text
        ///   keys of SMP this equals the `smp` package's order.
        public init(canonical: Bool) {
            self.mapKeyOrder = canonical ? .bytewise : .insertion
        }

        /// Whether map keys are sorted.
        public var canonical: Bool { mapKeyOrder != .insertion }
    }

    private var writer: ByteWriter
    private let options: Options

    /// Creates an empty writer.
    /// - Parameters:
    ///   - options: how values are written.
    ///   - capacity: bytes to reserve up front.
    public init(options: Options = Options(), capacity: Int = 0) {
        writer = ByteWriter(capacity: capacity)
        self.options = options
    }

    /// Creates a writer whose output continues after what `prefix` holds, e.g. a frame header
    /// written before the payload it describes, so the payload is encoded in place rather than
    /// copied behind the header afterwards.
    /// - Parameters:
    ///   - options: how values are written.
    ///   - prefix: the bytes the output starts with.
    public init(options: Options = Options(), continuing prefix: ByteWriter) {
        writer = prefix
        self.options = options
    }

    /// The bytes written so far.
    public var bytes: [UInt8] { writer.bytes }

    /// Encodes one value.
    /// - Parameters:
    ///   - value: the value.
    ///   - options: how it is written.
    /// - Returns: its encoding.
    public static func encode(_ value: CBOR, options: Options = Options()) -> [UInt8] {
        var writer = CBORWriter(options: options)
        writer.write(value)
        return writer.bytes
    }

    /// Appends the encoding of a value.
    /// - Parameter value: the value.
    public mutating func write(_ value: CBOR) {
        switch value {
        case .unsignedInt(let n): writeHead(major: 0, argument: n)
        case .negativeInt(let n): writeHead(major: 1, argument: n)
        case .byteString(let data):
            writeHead(major: 2, argument: UInt64(data.count))
            writeRaw(data)
        case .textString(let text):
            let utf8 = text.utf8
            writeHead(major: 3, argument: UInt64(utf8.count))
            writer.writeBytes(utf8)
        case .array(let elements):
            writeHead(major: 4, argument: UInt64(elements.count))
            for element in elements { write(element) }
        case .map(let map):
            writeHead(major: 5, argument: UInt64(map.count))
            if options.canonical {
                let encoded = map.entries.map { (key: CBORWriter.encode($0.key, options: options), value: $0.value) }
                let lengthFirst = options.mapKeyOrder == .lengthFirst
                let sorted = encoded.sorted { a, b in
                    if lengthFirst && a.key.count != b.key.count { return a.key.count < b.key.count }
                    return a.key.lexicographicallyPrecedes(b.key)
                }
                for entry in sorted {
                    writer.writeBytes(entry.key)
                    write(entry.value)
                }
            } else {
                for entry in map.entries {
                    write(entry.key)
                    write(entry.value)
                }
            }
        case .tagged(let tag, let item):
            writeHead(major: 6, argument: tag)
            write(item)
        case .boolean(let b): writer.writeByte(b ? 0xf5 : 0xf4)
        case .null: writer.writeByte(0xf6)
        case .undefined: writer.writeByte(0xf7)
        case .simple(let v):
            if v < 24 {
                writer.writeByte(0xe0 | v)
            } else {
                writer.writeByte(0xf8)
                writer.writeByte(v)
            }
        case .float(let f): writeFloat(f)
        }
    }

    /// Appends the head of an item: major type and argument in shortest form.
    /// - Parameters:
    ///   - major: major type 0...7.
    ///   - argument: the count, length, value or tag number.
    public mutating func writeHead(major: UInt8, argument: UInt64) {
        let type = major << 5
        switch argument {
        case 0..<24:
            writer.writeByte(type | UInt8(argument))
        case 24...0xff:
            writer.writeByte(type | 24)
            writer.writeInteger(UInt8(argument), endianness: .big)
        case 0x100...0xffff:
            writer.writeByte(type | 25)
            writer.writeInteger(UInt16(argument), endianness: .big)
        case 0x1_0000...0xffff_ffff:
            writer.writeByte(type | 26)
            writer.writeInteger(UInt32(argument), endianness: .big)
        default:
            writer.writeByte(type | 27)
            writer.writeInteger(argument, endianness: .big)
        }
    }

    /// Appends a text string given as a literal (a map key), without building a `String`.
    /// - Parameter text: the literal.
    public mutating func writeText(_ text: StaticString) {
        writeHead(major: 3, argument: UInt64(text.utf8CodeUnitCount))
        writer.writeBytes(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends raw, already-encoded bytes (e.g. a byte string's contents after its head).
    /// - Parameter bytes: the bytes.
    public mutating func writeRaw(_ bytes: some Collection<UInt8>) {
        writer.writeBytes(bytes)
    }

    /// Appends the bytes of `Data` in one copy (iterating `Data` byte by byte is slow).
    /// - Parameter data: the bytes.
    public mutating func writeRaw(_ data: Data) {
        data.withUnsafeBytes { _ = writer.writeBytes($0) }
    }

    /// Starts an indefinite-length array; end it with ``writeBreak()``.
    public mutating func writeIndefiniteArrayStart() { writer.writeByte(0x9f) }

    /// Starts an indefinite-length map (as zcbor sends); end it with ``writeBreak()``.
    public mutating func writeIndefiniteMapStart() { writer.writeByte(0xbf) }

    /// Starts an indefinite-length byte string; add definite byte-string chunks, then ``writeBreak()``.
    public mutating func writeIndefiniteByteStringStart() { writer.writeByte(0x5f) }

    /// Starts an indefinite-length text string; add definite text chunks, then ``writeBreak()``.
    public mutating func writeIndefiniteTextStringStart() { writer.writeByte(0x7f) }

    /// Ends an indefinite-length item.
    public mutating func writeBreak() { writer.writeByte(0xff) }

    private mutating func writeFloat(_ f: CBORFloat) {
        switch f.width {
        case .half:
            writer.writeByte(0xf9)
            writer.writeInteger(HalfFloat.bitsRounded(f.value), endianness: .big)
        case .single:
            writer.writeByte(0xfa)
            writer.writeInteger(Float(f.value).bitPattern, endianness: .big)
        case .double:
            writer.writeByte(0xfb)
            writer.writeInteger(f.value.bitPattern, endianness: .big)
        }
    }
}
