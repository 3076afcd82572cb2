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
        CBORWriter.encode(try encodeToValue(value), options: options)
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
        if let index = map?.firstIndex(where: { $0.key == key }) {
            map?[index].box = box
        } else {
            map?.append((key, box))
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
    static func primitive(_ value: some Encodable) -> CBOR? {
        switch value {
        case let v as Data: .byteString(v)
        case let v as CBOR: v
        case let v as String: .textString(v)
        case let v as Bool: .boolean(v)
        case let v as Int: CBOR(v)
        case let v as UInt: CBOR(v)
        case let v as Int64: CBOR(v)
        case let v as UInt64: CBOR(v)
        case let v as Int32: CBOR(v)
        case let v as UInt32: CBOR(v)
        case let v as Int16: CBOR(v)
        case let v as UInt16: CBOR(v)
        case let v as Int8: CBOR(v)
        case let v as UInt8: CBOR(v)
        case let v as Double: .float(CBORFloat(v))
        case let v as Float: .float(CBORFloat(Double(v)))
        default: nil
        }
    }
}
