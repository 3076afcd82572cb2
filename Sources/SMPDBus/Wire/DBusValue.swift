// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    /// One D-Bus value with its type.
    ///
    /// Byte arrays (`ay`) are ``bytes(_:)``: the reader always produces them so, and the writer
    /// accepts an ``array(_:_:)`` of `.byte` values as well.
    public indirect enum DBusValue: Sendable, Hashable {
        case byte(UInt8)
        case boolean(Bool)
        case int16(Int16)
        case uint16(UInt16)
        case int32(Int32)
        case uint32(UInt32)
        case int64(Int64)
        case uint64(UInt64)
        case double(Double)
        case string(String)
        case objectPath(DBusObjectPath)
        case signature(DBusSignature)
        /// `h`: an index into the file descriptors that travel with the message.
        case unixFD(UInt32)
        /// `v`: a value with its own type.
        case variant(DBusValue)
        /// `ay`.
        case bytes([UInt8])
        /// `aT`, with the element type (needed for an empty array).
        case array(DBusType, [DBusValue])
        /// `a{KV}`, entries in order (the wire keeps the order; duplicates are the sender's business).
        case dictionary(key: DBusType, value: DBusType, [DBusDictionaryEntry])
        /// `(…)`.
        case structure([DBusValue])

        /// The value's type.
        public var type: DBusType {
            switch self {
            case .byte: .byte
            case .boolean: .boolean
            case .int16: .int16
            case .uint16: .uint16
            case .int32: .int32
            case .uint32: .uint32
            case .int64: .int64
            case .uint64: .uint64
            case .double: .double
            case .string: .string
            case .objectPath: .objectPath
            case .signature: .signature
            case .unixFD: .unixFD
            case .variant: .variant
            case .bytes: .array(.byte)
            case .array(let element, _): .array(element)
            case .dictionary(let key, let value, _): .dictionary(key: key, value: value)
            case .structure(let fields): .structure(fields.map(\.type))
            }
        }

        /// `a{sv}` from pairs, the shape BlueZ uses for options and properties.
        /// - Parameter entries: names and values (each wrapped in a variant).
        /// - Returns: the dictionary.
        public static func options(_ entries: [(String, DBusValue)]) -> DBusValue {
            .dictionary(
                key: .string,
                value: .variant,
                entries.map { DBusDictionaryEntry(key: .string($0.0), value: .variant($0.1)) }
            )
        }

        /// `as`.
        /// - Parameter strings: the strings.
        /// - Returns: the array.
        public static func strings(_ strings: [String]) -> DBusValue {
            .array(.string, strings.map { .string($0) })
        }
    }

    /// One entry of a D-Bus dictionary.
    public struct DBusDictionaryEntry: Sendable, Hashable {
        /// The key (a basic type).
        public var key: DBusValue
        /// The value.
        public var value: DBusValue

        /// Creates an entry.
        /// - Parameters:
        ///   - key: the key.
        ///   - value: the value.
        public init(key: DBusValue, value: DBusValue) {
            self.key = key
            self.value = value
        }
    }

    // MARK: - Reading values

    extension DBusValue {
        /// The string of a `.string` or `.objectPath`, else `nil`.
        public var stringValue: String? {
            switch self {
            case .string(let text): text
            case .objectPath(let path): path.rawValue
            case .variant(let inner): inner.stringValue
            default: nil
            }
        }

        /// The value of a `.boolean`, else `nil`.
        public var boolValue: Bool? {
            switch self {
            case .boolean(let value): value
            case .variant(let inner): inner.boolValue
            default: nil
            }
        }

        /// Any integer type as an `Int`, else `nil`.
        public var intValue: Int? {
            switch self {
            case .byte(let value): Int(value)
            case .int16(let value): Int(value)
            case .uint16(let value): Int(value)
            case .int32(let value): Int(value)
            case .uint32(let value): Int(value)
            case .int64(let value): Int(value)
            case .uint64(let value): Int(exactly: value)
            case .variant(let inner): inner.intValue
            default: nil
            }
        }

        /// The bytes of an `ay`, else `nil`.
        public var bytesValue: [UInt8]? {
            switch self {
            case .bytes(let bytes): bytes
            case .array(.byte, let elements):
                elements.compactMap { if case .byte(let byte) = $0 { byte } else { nil } }
            case .variant(let inner): inner.bytesValue
            default: nil
            }
        }

        /// The strings of an `as` (or `ao`), else `nil`.
        public var stringArray: [String]? {
            switch self {
            case .array(_, let elements):
                let strings = elements.compactMap(\.stringValue)
                return strings.count == elements.count ? strings : nil
            case .variant(let inner): return inner.stringArray
            default: return nil
            }
        }

        /// The entries of a dictionary keyed by strings (`a{sv}`, `a{sa{sv}}`), variants unwrapped,
        /// else `nil`. A key given twice keeps its last value.
        public var stringDictionary: [String: DBusValue]? {
            switch self {
            case .dictionary(_, _, let entries):
                var result: [String: DBusValue] = [:]
                for entry in entries {
                    guard let key = entry.key.stringValue else { return nil }
                    if case .variant(let inner) = entry.value { result[key] = inner } else { result[key] = entry.value }
                }
                return result
            case .variant(let inner): return inner.stringDictionary
            default: return nil
            }
        }
    }
#endif
