import Foundation
import HTTPTypes
import SMPCBOR

/// A JSON value as the raw view's body gives it, turned into the CBOR a device reads: numbers
/// without a fraction become integers, others floats; an object's keys are sorted (JSON parsers
/// keep no order), so the same body always makes the same frame.
enum JSONBody: Decodable, Sendable, Equatable {
    case null
    case boolean(Bool)
    case signed(Int64)
    case unsigned(UInt64)
    case double(Double)
    case string(String)
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
        do {
            return try JSONDecoder().decode(JSONBody.self, from: Data(text.utf8))
        } catch let error as DecodingError {
            throw WebError(.badRequest, "Body (JSON): not JSON: \(API.describe(error))")
        } catch {
            throw WebError(.badRequest, "Body (JSON): not JSON")
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
        case .array(let values): .array(values.map(\.cbor))
        case .object(let members):
            .map(CBORMap(members.keys.sorted().map { .init(key: .textString($0), value: members[$0]?.cbor ?? .null) }))
        }
    }
}
