import Foundation

/// One CBOR data item (RFC 8949), as a value.
///
/// The value is semantic: indefinite-length strings, arrays and maps decode to the same value as
/// their definite-length forms, and the writer emits definite lengths. Two things are kept
/// exactly as they were encoded because they change the bytes without changing the meaning a
/// reader sees: the width of a float (half, single or double) and the order of map entries.
/// So `decode → encode` is byte-exact for anything written with definite lengths and
/// shortest-form integers (deterministic encoding, RFC 8949 §4.2.1 minus key sorting).
///
/// Equality is the data model's (RFC 8949 §2): text strings are equal when their UTF-8 bytes
/// are, with no Unicode normalisation, so map keys that differ only in normalisation are two
/// keys, not a duplicate.
public enum CBOR: Sendable, Hashable {
    /// Major type 0: an unsigned integer 0...2⁶⁴−1.
    case unsignedInt(UInt64)
    /// Major type 1: the negative integer −1 − `n` (so `.negativeInt(0)` is −1, and the range
    /// reaches −2⁶⁴).
    case negativeInt(UInt64)
    /// Major type 2: a byte string. SMP uses these for hashes, image data and settings values.
    case byteString(Data)
    /// Major type 3: a UTF-8 text string.
    case textString(String)
    /// Major type 4: an array.
    case array([CBOR])
    /// Major type 5: a map whose entries keep their order.
    case map(CBORMap)
    /// Major type 6: a tagged item, e.g. tag 107 on a SUIT envelope.
    indirect case tagged(UInt64, CBOR)
    /// Major type 7, values 20/21.
    case boolean(Bool)
    /// Major type 7, value 22.
    case null
    /// Major type 7, value 23.
    case undefined
    /// Major type 7, any other simple value (0...19 and 32...255).
    case simple(UInt8)
    /// Major type 7, a half, single or double precision float; the width is kept.
    case float(CBORFloat)
}

extension CBOR {
    // Swift's `String` equality is Unicode canonical equivalence ("é" precomposed equals "e" and a
    // combining accent); CBOR's is by bytes. Every other case compares as synthesised equality would.
    public static func == (lhs: CBOR, rhs: CBOR) -> Bool {
        switch (lhs, rhs) {
        case (.unsignedInt(let a), .unsignedInt(let b)), (.negativeInt(let a), .negativeInt(let b)): a == b
        case (.byteString(let a), .byteString(let b)): a == b
        case (.textString(let a), .textString(let b)): a.utf8.elementsEqual(b.utf8)
        case (.array(let a), .array(let b)): a == b
        case (.map(let a), .map(let b)): a == b
        case (.tagged(let tagA, let a), .tagged(let tagB, let b)): tagA == tagB && a == b
        case (.boolean(let a), .boolean(let b)): a == b
        case (.null, .null), (.undefined, .undefined): true
        case (.simple(let a), .simple(let b)): a == b
        case (.float(let a), .float(let b)): a == b
        default: false
        }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(majorKind)
        switch self {
        case .unsignedInt(let value), .negativeInt(let value): hasher.combine(value)
        case .byteString(let value): hasher.combine(value)
        case .textString(let value):
            // By bytes, as equality is: `String`'s own hash follows canonical equivalence.
            hasher.combine(value.utf8.count)
            for byte in value.utf8 { hasher.combine(byte) }
        case .array(let value): hasher.combine(value)
        case .map(let value): hasher.combine(value)
        case .tagged(let tag, let value):
            hasher.combine(tag)
            hasher.combine(value)
        case .boolean(let value): hasher.combine(value)
        case .null, .undefined: break
        case .simple(let value): hasher.combine(value)
        case .float(let value): hasher.combine(value)
        }
    }

    /// Which case this is, for hashing.
    private var majorKind: UInt8 {
        switch self {
        case .unsignedInt: 0
        case .negativeInt: 1
        case .byteString: 2
        case .textString: 3
        case .array: 4
        case .map: 5
        case .tagged: 6
        case .boolean: 7
        case .null: 8
        case .undefined: 9
        case .simple: 10
        case .float: 11
        }
    }
}

/// A floating-point CBOR value together with the width it is (or will be) encoded in.
public struct CBORFloat: Sendable, Hashable, CustomStringConvertible {
    /// Encoded width of a CBOR float.
    public enum Width: Sendable, Hashable {
        /// IEEE 754 binary16, additional information 25.
        case half
        /// IEEE 754 binary32, additional information 26.
        case single
        /// IEEE 754 binary64, additional information 27.
        case double
    }

    /// The numeric value (every half and single value is exactly representable as a double).
    public var value: Double
    /// The width the value is encoded in.
    public var width: Width

    /// Creates a float with an explicit width.
    /// - Parameters:
    ///   - value: the value; it must be exactly representable in `width` or it will be rounded
    ///     when encoded.
    ///   - width: the encoded width.
    public init(_ value: Double, width: Width) {
        self.value = value
        self.width = width
    }

    /// Creates a float in its preferred serialization: the shortest width that holds `value`
    /// exactly (RFC 8949 §4.2.1); NaN becomes the half-precision quiet NaN `f9 7e 00`.
    /// - Parameter value: the value.
    public init(_ value: Double) {
        self.value = value
        if value.isNaN || HalfFloat.bits(exactly: value) != nil {
            width = .half
        } else if Double(Float(value)) == value {
            width = .single
        } else {
            width = .double
        }
    }

    public var description: String { "\(value)" }

    // Equality is on the encoded representation, so NaN equals NaN and 0.0 differs from -0.0,
    // which is what a byte-exact codec needs.
    public static func == (lhs: CBORFloat, rhs: CBORFloat) -> Bool {
        lhs.width == rhs.width && lhs.value.bitPattern == rhs.value.bitPattern
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(width)
        hasher.combine(value.bitPattern)
    }
}

/// The entries of a CBOR map, in order.
///
/// Backed by an array, never a `Dictionary`: the order a map is built in is the order it is
/// encoded in, so output is deterministic across processes. Lookups are linear, which is the
/// right trade for SMP's maps of a handful of keys.
public struct CBORMap: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    /// One key/value pair.
    public struct Entry: Sendable, Hashable {
        /// The key; SMP uses text keys, CBOR allows any item.
        public var key: CBOR
        /// The value.
        public var value: CBOR

        /// Creates an entry.
        /// - Parameters:
        ///   - key: the key.
        ///   - value: the value.
        public init(key: CBOR, value: CBOR) {
            self.key = key
            self.value = value
        }
    }

    /// The entries in encoding order.
    public var entries: [Entry]

    /// Creates a map from entries, keeping their order.
    /// - Parameter entries: the entries.
    public init(_ entries: [Entry] = []) {
        self.entries = entries
    }

    public init(dictionaryLiteral elements: (CBOR, CBOR)...) {
        entries = elements.map { Entry(key: $0.0, value: $0.1) }
    }

    public var startIndex: Int { entries.startIndex }
    public var endIndex: Int { entries.endIndex }
    public subscript(position: Int) -> Entry { entries[position] }

    /// The value of the first entry whose key equals `key`, or `nil`.
    /// Setting replaces that entry in place, appends a new one, or (with `nil`) removes it.
    public subscript(key: CBOR) -> CBOR? {
        get { entries.first { $0.key == key }?.value }
        set {
            if let index = entries.firstIndex(where: { $0.key == key }) {
                if let newValue { entries[index].value = newValue } else { entries.remove(at: index) }
            } else if let newValue {
                entries.append(Entry(key: key, value: newValue))
            }
        }
    }

    /// The value for a text key, the common case in SMP.
    public subscript(key: String) -> CBOR? {
        get { self[.textString(key)] }
        set { self[.textString(key)] = newValue }
    }

    /// Appends an entry without checking for an existing key.
    /// - Parameters:
    ///   - key: the key.
    ///   - value: the value.
    public mutating func append(key: CBOR, value: CBOR) {
        entries.append(Entry(key: key, value: value))
    }
}

// MARK: - Literals and accessors

extension CBOR: ExpressibleByIntegerLiteral, ExpressibleByStringLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByFloatLiteral, ExpressibleByNilLiteral
{
    public init(integerLiteral value: Int64) { self.init(value) }
    public init(stringLiteral value: String) { self = .textString(value) }
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
    public init(arrayLiteral elements: CBOR...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (CBOR, CBOR)...) {
        self = .map(CBORMap(elements.map { CBORMap.Entry(key: $0.0, value: $0.1) }))
    }
    public init(floatLiteral value: Double) { self = .float(CBORFloat(value)) }
    public init(nilLiteral: ()) { self = .null }

    /// Creates an integer item in major type 0 or 1 as its sign requires.
    /// - Parameter value: the integer.
    public init(_ value: some BinaryInteger) {
        if value >= 0 {
            self = .unsignedInt(UInt64(value))
        } else {
            // In two's complement ~v == -1 - v, computed without overflow even for Int64.min.
            self = .negativeInt(UInt64(~value))
        }
    }

    /// The value as a signed 64-bit integer, or `nil` if it is not an integer or out of range.
    public var int64Value: Int64? {
        switch self {
        case .unsignedInt(let n): n <= UInt64(Int64.max) ? Int64(n) : nil
        case .negativeInt(let n): n <= UInt64(Int64.max) ? -1 - Int64(n) : nil
        default: nil
        }
    }

    /// The value as an unsigned 64-bit integer, or `nil` if it is not a non-negative integer.
    public var uint64Value: UInt64? {
        if case .unsignedInt(let n) = self { n } else { nil }
    }

    /// The text, or `nil` if this is not a text string.
    public var stringValue: String? {
        if case .textString(let s) = self { s } else { nil }
    }

    /// The bytes, or `nil` if this is not a byte string.
    public var dataValue: Data? {
        if case .byteString(let d) = self { d } else { nil }
    }

    /// The Boolean, or `nil` if this is not `true`/`false`.
    public var boolValue: Bool? {
        if case .boolean(let b) = self { b } else { nil }
    }

    /// The map, or `nil` if this is not a map.
    public var mapValue: CBORMap? {
        if case .map(let m) = self { m } else { nil }
    }

    /// The elements, or `nil` if this is not an array.
    public var arrayValue: [CBOR]? {
        if case .array(let a) = self { a } else { nil }
    }

    /// The value of a text key when this item is a map; `nil` otherwise.
    public subscript(key: String) -> CBOR? { mapValue?[key] }
}
