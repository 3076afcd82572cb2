/// A CBOR byte string could not be decoded (or a value could not be encoded).
///
/// Carries a ``Code`` saying what was wrong and the byte ``offset`` where it was found, so a
/// capture can be inspected at the right place. Equality compares code and offset.
public struct CBORError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong. An open set: new codes can be added without breaking callers.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: Sendable, Hashable {
            case truncated, reservedAdditionalInfo, nestingTooDeep, lengthExceedsInput, invalidUTF8
            case unexpectedBreak, invalidIndefiniteChunk, invalidSimpleValue, duplicateMapKey, trailingBytes
            case lengthTooLarge, unexpectedType
        }
        private let kind: Kind

        /// The input ended in the middle of an item.
        public static let truncated = Code(kind: .truncated)
        /// Additional information 28, 29 or 30 (reserved by RFC 8949), or 31 on a major type that
        /// cannot be indefinite.
        public static let reservedAdditionalInfo = Code(kind: .reservedAdditionalInfo)
        /// Arrays, maps and tags nested deeper than the reader's limit.
        public static let nestingTooDeep = Code(kind: .nestingTooDeep)
        /// A declared length or element count larger than the bytes that remain, checked before
        /// anything is allocated.
        public static let lengthExceedsInput = Code(kind: .lengthExceedsInput)
        /// A text string that is not valid UTF-8.
        public static let invalidUTF8 = Code(kind: .invalidUTF8)
        /// A break byte (`0xff`) outside an indefinite-length item, or a map ending after a key.
        public static let unexpectedBreak = Code(kind: .unexpectedBreak)
        /// A chunk of an indefinite-length string that is not a definite string of the same type.
        public static let invalidIndefiniteChunk = Code(kind: .invalidIndefiniteChunk)
        /// A two-byte simple value below 32 (not well-formed per RFC 8949 §3.3).
        public static let invalidSimpleValue = Code(kind: .invalidSimpleValue)
        /// The same key twice in one map.
        public static let duplicateMapKey = Code(kind: .duplicateMapKey)
        /// Bytes left over after the single expected item.
        public static let trailingBytes = Code(kind: .trailingBytes)
        /// A length that does not fit this platform's `Int`.
        public static let lengthTooLarge = Code(kind: .lengthTooLarge)
        /// A well-formed item of another type than the one being read (streaming reads).
        public static let unexpectedType = Code(kind: .unexpectedType)

        public var description: String {
            switch kind {
            case .truncated: "truncated input"
            case .reservedAdditionalInfo: "reserved additional information"
            case .nestingTooDeep: "nesting too deep"
            case .lengthExceedsInput: "declared length exceeds the remaining input"
            case .invalidUTF8: "text string is not valid UTF-8"
            case .unexpectedBreak: "break outside an indefinite-length item"
            case .invalidIndefiniteChunk: "invalid chunk in an indefinite-length string"
            case .invalidSimpleValue: "invalid two-byte simple value"
            case .duplicateMapKey: "duplicate map key"
            case .trailingBytes: "trailing bytes after the item"
            case .lengthTooLarge: "length too large"
            case .unexpectedType: "unexpected item type"
            }
        }
    }

    /// What was wrong.
    public var code: Code
    /// Byte offset in the input where the problem was found.
    public var offset: Int

    /// Creates an error.
    /// - Parameters:
    ///   - code: what was wrong.
    ///   - offset: byte offset of the problem.
    public init(_ code: Code, at offset: Int) {
        self.code = code
        self.offset = offset
    }

    public var description: String { "CBOR: \(code) at byte \(offset)" }
}
