import Foundation

/// Decodes `Decodable` values from CBOR.
///
/// Accepts whatever ``CBORReader`` accepts (definite or indefinite lengths, any key order) and
/// ignores map keys the type does not declare, so newer firmware with extra fields still
/// decodes. Byte strings decode to `Data`; integers decode to any integer type they fit
/// exactly (otherwise `DecodingError.dataCorrupted`); floats and integers decode to
/// `Double`/`Float`; tags are looked through unless the target is ``CBOR`` itself.
public struct CBORDecoder: Sendable {
    /// Bounds for hostile input, used when decoding from bytes.
    public var limits: CBORReader.Limits
    /// Context passed to `init(from:)` implementations.
    public var userInfo: [CodingUserInfoKey: any Sendable]

    /// Creates a decoder.
    /// - Parameters:
    ///   - limits: bounds for hostile input.
    ///   - userInfo: context for `init(from:)` implementations.
    public init(limits: CBORReader.Limits = .init(), userInfo: [CodingUserInfoKey: any Sendable] = [:]) {
        self.limits = limits
        self.userInfo = userInfo
    }

    /// Decodes a value from a ``CBOR`` tree.
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - value: the CBOR value.
    /// - Returns: the decoded value.
    /// - Throws: `DecodingError` describing the coding path of the first mismatch.
    public func decode<T: Decodable>(_ type: T.Type, from value: CBOR) throws -> T {
        try _CBORDecoder(value: value, codingPath: [], userInfo: userInfo).unbox(value, as: T.self, codingPath: [])
    }

    /// Decodes a value from bytes holding exactly one CBOR item.
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - bytes: the encoding.
    /// - Returns: the decoded value.
    /// - Throws: ``CBORError`` for malformed bytes, `DecodingError` for a shape mismatch.
    public func decode<T: Decodable>(_ type: T.Type, from bytes: [UInt8]) throws -> T {
        if let direct = type as? any CBORDirectDecodable.Type {
            var reader = CBORReader(bytes, limits: limits)
            let value = try direct.init(cbor: &reader)
            guard reader.isAtEnd else { throw CBORError(.trailingBytes, at: reader.offset) }
            guard let typed = value as? T else { throw CBORError(.unexpectedType, at: 0) }
            return typed
        }
        return try decode(type, from: CBORReader.decode(bytes, limits: limits))
    }

    /// Decodes a value from `Data` holding exactly one CBOR item.
    /// - Parameters:
    ///   - type: the type to decode.
    ///   - data: the encoding.
    /// - Returns: the decoded value.
    /// - Throws: ``CBORError`` for malformed bytes, `DecodingError` for a shape mismatch.
    public func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        try decode(type, from: [UInt8](data))
    }
}

final class _CBORDecoder: Decoder {
    let value: CBOR
    let codingPath: [any CodingKey]
    let userInfo: [CodingUserInfoKey: Any]
    let sendableUserInfo: [CodingUserInfoKey: any Sendable]

    init(value: CBOR, codingPath: [any CodingKey], userInfo: [CodingUserInfoKey: any Sendable]) {
        self.value = value
        self.codingPath = codingPath
        self.sendableUserInfo = userInfo
        self.userInfo = userInfo
    }

    /// The value with any tags removed.
    var untagged: CBOR { value.untagged }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let map = untagged.mapValue else {
            throw DecodingError.typeMismatch(CBORMap.self, context("expected a map, found \(untagged.kindName)"))
        }
        return KeyedDecodingContainer(CBORKeyedDecodingContainer<Key>(decoder: self, map: map))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let array = untagged.arrayValue else {
            throw DecodingError.typeMismatch([CBOR].self, context("expected an array, found \(untagged.kindName)"))
        }
        return CBORUnkeyedDecodingContainer(decoder: self, elements: array)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        CBORSingleValueDecodingContainer(decoder: self)
    }

    func context(_ message: String, path: [any CodingKey]? = nil) -> DecodingError.Context {
        DecodingError.Context(codingPath: path ?? codingPath, debugDescription: message)
    }

    /// Decodes `T` from `value`, with fast paths for the types CBOR represents directly.
    func unbox<T: Decodable>(_ value: CBOR, as type: T.Type, codingPath: [any CodingKey]) throws -> T {
        if T.self == CBOR.self { return unsafeBitCast(value, to: T.self) }
        let plain = value.untagged
        if let primitive = try unboxPrimitive(plain, as: type, codingPath: codingPath) { return primitive }
        return try T(from: _CBORDecoder(value: value, codingPath: codingPath, userInfo: sendableUserInfo))
    }

    private func unboxPrimitive<T>(_ value: CBOR, as type: T.Type, codingPath: [any CodingKey]) throws -> T? {
        func mismatch(_ expected: String) -> DecodingError {
            DecodingError.typeMismatch(
                T.self,
                context("expected \(expected), found \(value.kindName)", path: codingPath)
            )
        }
        // Metatype comparisons, not dynamic casts: this runs for every decoded field.
        if T.self == Data.self {
            guard let data = value.dataValue else { throw mismatch("a byte string") }
            return unsafeBitCast(data, to: T.self)
        }
        if T.self == String.self {
            guard let text = value.stringValue else { throw mismatch("a text string") }
            return unsafeBitCast(text, to: T.self)
        }
        if T.self == Bool.self {
            guard let flag = value.boolValue else { throw mismatch("a Boolean") }
            return unsafeBitCast(flag, to: T.self)
        }
        if T.self == UInt64.self {
            return unsafeBitCast(try integer(value, as: UInt64.self, codingPath: codingPath), to: T.self)
        }
        if T.self == UInt32.self {
            return unsafeBitCast(try integer(value, as: UInt32.self, codingPath: codingPath), to: T.self)
        }
        if T.self == Int.self {
            return unsafeBitCast(try integer(value, as: Int.self, codingPath: codingPath), to: T.self)
        }
        if T.self == Double.self {
            guard let number = floatingValue(value) else { throw mismatch("a number") }
            return unsafeBitCast(number, to: T.self)
        }
        if T.self == Float.self {
            guard let number = floatingValue(value) else { throw mismatch("a number") }
            return unsafeBitCast(Float(number), to: T.self)
        }
        if T.self == Int8.self {
            return unsafeBitCast(try integer(value, as: Int8.self, codingPath: codingPath), to: T.self)
        }
        if T.self == Int16.self {
            return unsafeBitCast(try integer(value, as: Int16.self, codingPath: codingPath), to: T.self)
        }
        if T.self == Int32.self {
            return unsafeBitCast(try integer(value, as: Int32.self, codingPath: codingPath), to: T.self)
        }
        if T.self == Int64.self {
            return unsafeBitCast(try integer(value, as: Int64.self, codingPath: codingPath), to: T.self)
        }
        if T.self == UInt.self {
            return unsafeBitCast(try integer(value, as: UInt.self, codingPath: codingPath), to: T.self)
        }
        if T.self == UInt8.self {
            return unsafeBitCast(try integer(value, as: UInt8.self, codingPath: codingPath), to: T.self)
        }
        if T.self == UInt16.self {
            return unsafeBitCast(try integer(value, as: UInt16.self, codingPath: codingPath), to: T.self)
        }
        return nil
    }

    private func floatingValue(_ value: CBOR) -> Double? {
        switch value {
        case .float(let f): f.value
        case .unsignedInt(let n): Double(n)
        case .negativeInt(let n): -1 - Double(n)
        default: nil
        }
    }

    func integer<I: FixedWidthInteger>(_ value: CBOR, as type: I.Type, codingPath: [any CodingKey]) throws -> I {
        let result: I?
        switch value {
        case .unsignedInt(let n): result = I(exactly: n)
        case .negativeInt(let n):
            // -1 - n fits I exactly when n ≤ I.max (the extreme is -1 - I.max == I.min).
            result = I.isSigned ? I(exactly: n).map { -1 - $0 } : nil
        default:
            throw DecodingError.typeMismatch(
                I.self,
                context("expected an integer, found \(value.kindName)", path: codingPath)
            )
        }
        guard let result else {
            throw DecodingError.dataCorrupted(context("\(value) does not fit in \(I.self)", path: codingPath))
        }
        return result
    }
}

extension CBOR {
    /// The value with any enclosing tags removed.
    var untagged: CBOR {
        var current = self
        while case .tagged(_, let inner) = current { current = inner }
        return current
    }

    /// A short name of the item's kind, for error messages.
    var kindName: String {
        switch self {
        case .unsignedInt, .negativeInt: "an integer"
        case .byteString: "a byte string"
        case .textString: "a text string"
        case .array: "an array"
        case .map: "a map"
        case .tagged: "a tagged item"
        case .boolean: "a Boolean"
        case .null: "null"
        case .undefined: "undefined"
        case .simple: "a simple value"
        case .float: "a float"
        }
    }
}
