// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    /// One complete D-Bus type, as a signature spells it.
    public indirect enum DBusType: Sendable, Hashable, CustomStringConvertible {
        case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
        case string, objectPath, signature
        /// `h`: an index into the message's Unix file descriptors.
        case unixFD
        case variant
        /// `aT`.
        case array(DBusType)
        /// `a{KV}`: an array of dictionary entries (only valid inside an array).
        case dictionary(key: DBusType, value: DBusType)
        /// `(T…)`: at least one field.
        case structure([DBusType])

        /// The signature of this one type.
        public var description: String {
            switch self {
            case .byte: "y"
            case .boolean: "b"
            case .int16: "n"
            case .uint16: "q"
            case .int32: "i"
            case .uint32: "u"
            case .int64: "x"
            case .uint64: "t"
            case .double: "d"
            case .string: "s"
            case .objectPath: "o"
            case .signature: "g"
            case .unixFD: "h"
            case .variant: "v"
            case .array(let element): "a" + element.description
            case .dictionary(let key, let value): "a{" + key.description + value.description + "}"
            case .structure(let fields): "(" + fields.map(\.description).joined() + ")"
            }
        }

        /// Whether the type is basic (may be a dictionary key).
        public var isBasic: Bool {
            switch self {
            case .variant, .array, .dictionary, .structure: false
            default: true
            }
        }

        /// The alignment of a value of this type on the wire, in bytes.
        public var alignment: Int {
            switch self {
            case .byte, .signature, .variant: 1
            case .int16, .uint16: 2
            case .boolean, .int32, .uint32, .unixFD, .string, .objectPath, .array, .dictionary: 4
            case .int64, .uint64, .double, .structure: 8
            }
        }

        /// The size of a fixed-size basic type, or `nil` for strings and containers.
        var fixedSize: Int? {
            switch self {
            case .byte: 1
            case .int16, .uint16: 2
            case .boolean, .int32, .uint32, .unixFD: 4
            case .int64, .uint64, .double: 8
            default: nil
            }
        }
    }

    /// A validated D-Bus type signature: zero or more complete types, at most 255 bytes, nested at
    /// most 32 arrays and 32 structures deep.
    public struct DBusSignature: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
        /// The complete types, in order.
        public let types: [DBusType]
        /// The signature text.
        public let rawValue: String

        /// The specification's limit on a signature's length.
        public static let maximumLength = 255
        /// The specification's limit on array nesting (and separately on structure nesting).
        public static let maximumContainerDepth = 32

        /// The empty signature.
        public static let empty = DBusSignature(checked: [])

        /// Parses and validates a signature.
        /// - Parameter text: e.g. `a{sv}as`.
        /// - Throws: ``DBusError`` `.invalidSignature` naming the offending position.
        public init(_ text: String) throws(DBusError) {
            let bytes = Array(text.utf8)
            guard bytes.count <= Self.maximumLength else {
                throw DBusError(.invalidSignature, "\(bytes.count) bytes, more than \(Self.maximumLength)")
            }
            var parser = SignatureParser(bytes: bytes)
            var types: [DBusType] = []
            while !parser.atEnd { types.append(try parser.completeType()) }
            self.types = types
            rawValue = text
        }

        /// A signature of the given types (each valid by construction).
        /// - Parameter types: the types.
        public init(_ types: [DBusType]) {
            self.init(checked: types)
        }

        private init(checked types: [DBusType]) {
            self.types = types
            rawValue = types.map(\.description).joined()
        }

        /// Creates a signature from a literal; a malformed literal is a programming error.
        public init(stringLiteral value: String) {
            do {
                try self.init(value)
            } catch {
                preconditionFailure("invalid D-Bus signature literal '\(value)': \(error)")
            }
        }

        /// Parses a signature that must hold exactly one complete type (a variant's).
        /// - Parameter text: the signature.
        /// - Returns: the type.
        /// - Throws: ``DBusError`` `.invalidSignature`.
        public static func singleType(_ text: String) throws(DBusError) -> DBusType {
            let signature = try DBusSignature(text)
            guard signature.types.count == 1 else {
                throw DBusError(.invalidSignature, "'\(text)' is not one complete type")
            }
            return signature.types[0]
        }

        public var description: String { rawValue }
    }

    /// Recursive-descent parser of signature bytes, counting array and structure depth.
    private struct SignatureParser {
        let bytes: [UInt8]
        var index = 0
        var arrayDepth = 0
        var structDepth = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }

        mutating func completeType() throws(DBusError) -> DBusType {
            guard index < bytes.count else { throw failure("a type is missing at the end") }
            let code = bytes[index]
            index += 1
            if let basic = Self.basic(code) { return basic }
            switch code {
            case UInt8(ascii: "v"): return .variant
            case UInt8(ascii: "a"): return try arrayType()
            case UInt8(ascii: "("): return try structType()
            default: throw failure("'\(Self.character(code))' is not a type code", at: index - 1)
            }
        }

        private mutating func arrayType() throws(DBusError) -> DBusType {
            arrayDepth += 1
            defer { arrayDepth -= 1 }
            guard arrayDepth <= DBusSignature.maximumContainerDepth else {
                throw DBusError(
                    .invalidSignature,
                    "arrays nested more than \(DBusSignature.maximumContainerDepth) deep"
                )
            }
            guard index < bytes.count else { throw failure("an array has no element type") }
            guard bytes[index] == UInt8(ascii: "{") else { return .array(try completeType()) }
            index += 1
            guard index < bytes.count, let key = Self.basic(bytes[index]) else {
                throw failure("a dictionary key must be a basic type", at: index)
            }
            index += 1
            // The entry counts as a structure for the depth limit.
            structDepth += 1
            defer { structDepth -= 1 }
            guard structDepth <= DBusSignature.maximumContainerDepth else {
                throw DBusError(
                    .invalidSignature,
                    "structures nested more than \(DBusSignature.maximumContainerDepth) deep"
                )
            }
            let value = try completeType()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "}") else {
                throw failure("a dictionary entry holds exactly a key and a value", at: index)
            }
            index += 1
            return .dictionary(key: key, value: value)
        }

        private mutating func structType() throws(DBusError) -> DBusType {
            structDepth += 1
            defer { structDepth -= 1 }
            guard structDepth <= DBusSignature.maximumContainerDepth else {
                throw DBusError(
                    .invalidSignature,
                    "structures nested more than \(DBusSignature.maximumContainerDepth) deep"
                )
            }
            var fields: [DBusType] = []
            while index < bytes.count, bytes[index] != UInt8(ascii: ")") {
                fields.append(try completeType())
            }
            guard index < bytes.count else { throw failure("a structure is not closed") }
            guard !fields.isEmpty else { throw failure("a structure has no fields", at: index) }
            index += 1
            return .structure(fields)
        }

        private static func basic(_ code: UInt8) -> DBusType? {
            switch code {
            case UInt8(ascii: "y"): .byte
            case UInt8(ascii: "b"): .boolean
            case UInt8(ascii: "n"): .int16
            case UInt8(ascii: "q"): .uint16
            case UInt8(ascii: "i"): .int32
            case UInt8(ascii: "u"): .uint32
            case UInt8(ascii: "x"): .int64
            case UInt8(ascii: "t"): .uint64
            case UInt8(ascii: "d"): .double
            case UInt8(ascii: "s"): .string
            case UInt8(ascii: "o"): .objectPath
            case UInt8(ascii: "g"): .signature
            case UInt8(ascii: "h"): .unixFD
            default: nil
            }
        }

        private static func character(_ code: UInt8) -> String {
            (32..<127).contains(code) ? String(UnicodeScalar(code)) : "\\x" + String(code, radix: 16)
        }

        private func failure(_ what: String, at position: Int? = nil) -> DBusError {
            let text = String(decoding: bytes, as: UTF8.self)
            return DBusError(.invalidSignature, "'\(text)' at \(position ?? index): \(what)")
        }
    }
#endif
