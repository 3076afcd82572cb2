import Foundation

/// `CBOR` embeds in Codable types, so a field can hold "whatever the device sent".
///
/// With ``CBOREncoder``/``CBORDecoder`` the value passes through unchanged. Other coders (JSON,
/// property lists) get the nearest plain form: byte strings as `Data`, maps with text keys as
/// keyed containers, other maps as arrays of `[key, value]` pairs, tags as their content.
extension CBOR: Codable {
    public init(from decoder: any Decoder) throws {
        if let cborDecoder = decoder as? _CBORDecoder {
            self = cborDecoder.value
            return
        }
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .boolean(value)
        } else if let value = try? container.decode(Int64.self) {
            self = CBOR(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .unsignedInt(value)
        } else if let value = try? container.decode(Double.self) {
            self = .float(CBORFloat(value))
        } else if let value = try? container.decode(String.self) {
            self = .textString(value)
        } else if let value = try? container.decode([CBOR].self) {
            self = .array(value)
        } else {
            let map = try container.decode([String: CBOR].self)
            self = .map(
                CBORMap(map.sorted { $0.key < $1.key }.map { .init(key: .textString($0.key), value: $0.value) })
            )
        }
    }

    public func encode(to encoder: any Encoder) throws {
        if let cborEncoder = encoder as? _CBOREncoder {
            cborEncoder.box.value = self
            return
        }
        switch self {
        case .unsignedInt(let n):
            var container = encoder.singleValueContainer()
            try container.encode(n)
        case .negativeInt:
            var container = encoder.singleValueContainer()
            if let value = int64Value { try container.encode(value) } else { try container.encode(diagnostic()) }
        case .byteString(let data):
            var container = encoder.singleValueContainer()
            try container.encode(data)
        case .textString(let text):
            var container = encoder.singleValueContainer()
            try container.encode(text)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .map(let map):
            if map.entries.allSatisfy({ $0.key.stringValue != nil }) {
                var container = encoder.container(keyedBy: AnyCodingKey.self)
                for entry in map.entries {
                    try container.encode(entry.value, forKey: AnyCodingKey(entry.key.stringValue ?? ""))
                }
            } else {
                var container = encoder.unkeyedContainer()
                for entry in map.entries { try container.encode([entry.key, entry.value]) }
            }
        case .tagged(_, let item):
            try item.encode(to: encoder)
        case .boolean(let b):
            var container = encoder.singleValueContainer()
            try container.encode(b)
        case .null, .undefined:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .simple(let v):
            var container = encoder.singleValueContainer()
            try container.encode(v)
        case .float(let f):
            var container = encoder.singleValueContainer()
            try container.encode(f.value)
        }
    }
}
