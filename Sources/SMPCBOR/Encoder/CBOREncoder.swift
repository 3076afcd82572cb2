import Foundation

/// Encodes `Encodable` values as CBOR.
///
/// Output is deterministic: keyed containers keep the order keys are encoded in (for
/// synthesised conformances, declaration order), integers use their shortest form, `Data`
/// becomes a byte string (major type 2) while `[UInt8]` stays an array of integers, `nil`
/// optionals are omitted by synthesised `encodeIfPresent`, and a ``CBOR`` value embeds as itself.
/// Set ``options`` to `CBORWriter.Options(canonical: true)` for RFC 8949 §4.2.1 sorted maps.
public struct CBOREncoder: Sendable {
    /// How the bytes are written.
    public var options: CBORWriter.Options
    /// Context passed to `encode(to:)` implementations.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates an encoder.
    /// - Parameters:
    ///   - options: how the bytes are written.
    ///   - userInfo: context for `encode(to:)` implementations.
    public init(options: CBORWriter.Options = .init(), userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.options = options
        self.userInfo = userInfo
    }

    /// Encodes a value to a ``CBOR`` tree.
    /// - Parameter value: the value.
    /// - Returns: its CBOR form.
    /// - Throws: `EncodingError` if the value's `encode(to:)` throws or encodes nothing.
    public func encodeToValue<T: Encodable>(_ value: T) throws -> CBOR {
        let box = EncodingBox()
        let encoder = _CBOREncoder(box: box, codingPath: [], userInfo: userInfo)
        try encoder.encode(value, into: box)
        guard let result = box.resolve() else {
            throw EncodingError.invalidValue(
                value,
                .init(codingPath: [], debugDescription: "\(T.self) did not encode any value")
            )
        }
        return result
    }

    /// Encodes a value to bytes.
    /// - Parameter value: the value.
    /// - Returns: the encoding.
    /// - Throws: `EncodingError`.
    public func encodeToBytes<T: Encodable>(_ value: T) throws -> [UInt8] {
        if options.mapKeyOrder == .insertion, let direct = value as? any CBORDirectEncodable {
            var writer = CBORWriter(options: options)
            direct.encodeCBOR(into: &writer)
            return writer.bytes
        }
        let tree = try encodeToValue(value)
        var writer = CBORWriter(options: options, capacity: tree.encodedSizeEstimate)
        writer.write(tree)
        return writer.bytes
    }

    /// Encodes a value to `Data`.
    /// - Parameter value: the value.
    /// - Returns: the encoding.
    /// - Throws: `EncodingError`.
    public func encode<T: Encodable>(_ value: T) throws -> Data {
        Data(try encodeToBytes(value))
    }
}

/// A node of the value being built. A class, because nested containers are handed out before
/// they are filled and must be filled in place.
final class EncodingBox {
    var value: CBOR?
    var map: [(key: String, box: EncodingBox)]?
    var array: [EncodingBox]?

    init() {}
    init(_ value: CBOR) { self.value = value }

    func resolve() -> CBOR? {
        if let map {
            var result = CBORMap()
            result.entries.reserveCapacity(map.count)
            for entry in map {
                guard let child = entry.box.resolve() else { continue }
                result.append(key: .textString(entry.key), value: child)
            }
            return .map(result)
        }
        if let array { return .array(array.map { $0.resolve() ?? .null }) }
        return value
    }

    /// Sets `key`, replacing an earlier value for the same key so a map never repeats a key.
    func set(_ key: String, _ box: EncodingBox) {
        if map == nil { map = [] }
        if let index = map?.firstIndex(where: { $0.key.utf8.elementsEqual(key.utf8) }) {
            map?[index].box = box
        } else {
            map?.append((key, box))
        }
    }
}

extension CBOR {
    /// A cheap upper-bound guess of the encoded size, to size the output buffer once.
    var encodedSizeEstimate: Int {
        switch self {
        case .byteString(let data): data.count + 9
        case .textString(let text): text.utf8.count + 9
        case .array(let elements): elements.reduce(9) { $0 + $1.encodedSizeEstimate }
        case .map(let map): map.entries.reduce(9) { $0 + $1.key.encodedSizeEstimate + $1.value.encodedSizeEstimate }
        case .tagged(_, let item): item.encodedSizeEstimate + 9
        default: 9
        }
    }
}

final class _CBOREncoder: Encoder {
    let box: EncodingBox
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    private let sendableUserInfo: [CodingUserInfoKey: any Sendable]

    init(box: EncodingBox, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.box = box
        self.codingPath = codingPath
        self.sendableUserInfo = userInfo
        self.userInfo = userInfo
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if box.map == nil { box.map = [] }
        return KeyedEncodingContainer(CBORKeyedEncodingContainer<Key>(encoder: self, box: box))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if box.array == nil { box.array = [] }
        return CBORUnkeyedEncodingContainer(encoder: self, box: box)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        CBORSingleValueEncodingContainer(encoder: self)
    }

    func child(_ box: EncodingBox, key: any CodingKey) -> _CBOREncoder {
        _CBOREncoder(box: box, codingPath: codingPath + [key], userInfo: sendableUserInfo)
    }

    /// Encodes `value` into `box`, with fast paths for the types CBOR represents directly.
    func encode<T: Encodable>(_ value: T, into box: EncodingBox) throws {
        if let primitive = CBOREncoder.primitive(value) {
            box.value = primitive
            return
        }
        try value.encode(
            to: box === self.box ? self : _CBOREncoder(box: box, codingPath: codingPath, userInfo: sendableUserInfo)
        )
    }
}

extension CBOREncoder {
    /// The CBOR form of values that need no container: numbers, strings, Booleans, `Data`, ``CBOR``.
    ///
    /// Dispatches on the static type with metatype comparisons, which cost far less than a
    /// chain of dynamic casts; this is the hot path of every encoded field.
    @inline(__always)
    static func primitive<T: Encodable>(_ value: T) -> CBOR? {
        if T.self == Data.self { return .byteString(unsafeBitCast(value, to: Data.self)) }
        if T.self == String.self { return .textString(unsafeBitCast(value, to: String.self)) }
        if T.self == Bool.self { return .boolean(unsafeBitCast(value, to: Bool.self)) }
        if T.self == Int.self { return CBOR(unsafeBitCast(value, to: Int.self)) }
        if T.self == UInt64.self { return .unsignedInt(unsafeBitCast(value, to: UInt64.self)) }
        if T.self == UInt32.self { return .unsignedInt(UInt64(unsafeBitCast(value, to: UInt32.self))) }
        if T.self == CBOR.self { return unsafeBitCast(value, to: CBOR.self) }
        if T.self == UInt.self { return CBOR(unsafeBitCast(value, to: UInt.self)) }
        if T.self == Int64.self { return CBOR(unsafeBitCast(value, to: Int64.self)) }
        if T.self == Int32.self { return CBOR(unsafeBitCast(value, to: Int32.self)) }
        if T.self == Int16.self { return CBOR(unsafeBitCast(value, to: Int16.self)) }
        if T.self == UInt16.self { return CBOR(unsafeBitCast(value, to: UInt16.self)) }
        if T.self == Int8.self { return CBOR(unsafeBitCast(value, to: Int8.self)) }
        if T.self == UInt8.self { return CBOR(unsafeBitCast(value, to: UInt8.self)) }
        if T.self == Double.self { return .float(CBORFloat(unsafeBitCast(value, to: Double.self))) }
        if T.self == Float.self { return .float(CBORFloat(Double(unsafeBitCast(value, to: Float.self)))) }
        return nil
    }
}
