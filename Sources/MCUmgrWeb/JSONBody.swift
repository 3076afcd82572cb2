import Foundation
import HTTPTypes
import SMPBytes
import SMPCBOR

/// A JSON value as the raw view's body gives it, turned into the CBOR a device reads: numbers
/// without a fraction become integers, others floats; an object's keys are sorted (JSON parsers
/// keep no order), so the same body always makes the same frame. JSON has no byte strings, which
/// SMP uses for data, hashes and settings values: an object with the one key `$hex` and a string
/// of hex digits, `{"$hex": "0a0b"}`, is the byte string (as `h'0a0b'` in `mcumgr decode`'s
/// notation). SMP keys never start with `$`, so no payload needs that object as a map.
enum JSONBody: Decodable, Sendable, Equatable {
    case null
    case boolean(Bool)
    case signed(Int64)
    case unsigned(UInt64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case array([JSONBody])
    case object([String: JSONBody])

    init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        // Most specific first: a JSON number decodes as Double too, and only a whole one as Int.
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .boolean(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .signed(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .unsigned(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONBody].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONBody].self))
        }
    }

    /// Parses JSON text.
    /// - Parameter text: the text.
    /// - Throws: `WebError` 400 naming the field (`Body (JSON)`) for what is not JSON.
    static func parse(_ text: String) throws(WebError) -> JSONBody {
        let value: JSONBody
        do {
            value = try JSONDecoder().decode(JSONBody.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            throw WebError(.badRequest, "Body (JSON): not JSON: \(API.describe(error))")
        } catch {
            throw WebError(.badRequest, "Body (JSON): not JSON")
        }
        return try value.withByteStrings()
    }

    /// The value with every `{"$hex": "…"}` object read as the byte string it stands for.
    /// - Throws: `WebError` 400 for a `$hex` that is not a string of whole hex bytes, or that
    ///   shares its object with other keys (a map, or a typo: either way not what was meant).
    func withByteStrings() throws(WebError) -> JSONBody {
        switch self {
        case .array(let values):
            var resolved: [JSONBody] = []
            for value in values { resolved.append(try value.withByteStrings()) }
            return .array(resolved)
        case .object(let members) where members["$hex"] != nil:
            guard members.count == 1, case .string(let digits) = members["$hex"] else {
                throw WebError(
                    .badRequest,
                    #"Body (JSON): a byte string is an object with "$hex" alone and a string, e.g. {"$hex": "0a0b"}"#
                )
            }
            guard let bytes = Hex.decode(digits) else {
                throw WebError(
                    .badRequest,
                    "Body (JSON): $hex '\(digits.prefix(40))' is not hex bytes (pairs of 0-9 a-f)"
                )
            }
            return .bytes(bytes)
        case .object(let members):
            var resolved: [String: JSONBody] = [:]
            for (key, value) in members { resolved[key] = try value.withByteStrings() }
            return .object(resolved)
        default:
            return self
        }
    }

    /// The CBOR value.
    var cbor: CBOR {
        switch self {
        case .null: .null
        case .boolean(let value): .boolean(value)
        case .signed(let value): CBOR(value)
        case .unsigned(let value): .unsignedInt(value)
        case .double(let value): .float(CBORFloat(value))
        case .string(let value): .textString(value)
        case .bytes(let value): .byteString(Data(value))
        case .array(let values): .array(values.map(\.cbor))
        case .object(let members):
            .map(CBORMap(members.keys.sorted().map { .init(key: .textString($0), value: members[$0]?.cbor ?? .null) }))
        }
    }
}
