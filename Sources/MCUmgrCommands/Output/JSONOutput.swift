import Foundation
import SMPBytes
import SMPCBOR

/// A JSON value whose objects keep their key order, so `--json` output is stable and reads in
/// the order the device (or our model) put the fields.
public indirect enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case uint(UInt64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([(String, JSONValue)])

    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool { lhs.rendered() == rhs.rendered() }
    public func hash(into hasher: inout Hasher) { hasher.combine(rendered()) }

    /// The value as JSON text.
    /// - Parameter pretty: indent nested values by two spaces per level.
    /// - Returns: the text.
    public func rendered(pretty: Bool = false) -> String {
        var out = ""
        render(into: &out, pretty: pretty, indent: 0)
        return out
    }

    private func render(into out: inout String, pretty: Bool, indent: Int) {
        let newline = pretty ? "\n" + String(repeating: "  ", count: indent + 1) : ""
        let closing = pretty ? "\n" + String(repeating: "  ", count: indent) : ""
        switch self {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .int(let n): out += "\(n)"
        case .uint(let n): out += "\(n)"
        case .double(let d):
            // JSON has no NaN or infinities; they become strings rather than invalid output.
            out += d.isFinite ? "\(d)" : "\"\(d)\""
        case .string(let s): out += CBOR.quoted(s)
        case .array(let elements):
            if elements.isEmpty {
                out += "[]"
                return
            }
            out += "["
            for (index, element) in elements.enumerated() {
                out += (index == 0 ? "" : ",") + newline
                element.render(into: &out, pretty: pretty, indent: indent + 1)
            }
            out += closing + "]"
        case .object(let members):
            if members.isEmpty {
                out += "{}"
                return
            }
            out += "{"
            for (index, member) in members.enumerated() {
                out += (index == 0 ? "" : ",") + newline + CBOR.quoted(member.0) + (pretty ? ": " : ":")
                member.1.render(into: &out, pretty: pretty, indent: indent + 1)
            }
            out += closing + "}"
        }
    }

    /// A response as JSON, with the keys it has on the wire (its `CodingKeys`), through the same
    /// CBOR encoding the device side uses: the wire names are written once, in SMPCore.
    /// - Parameter response: the decoded response.
    /// - Throws: an encoding error (not for the SMPCore response types).
    public init(encoding response: some Encodable) throws {
        self.init(try CBOREncoder().encodeToValue(response))
    }

    /// An object with another object's members added: a member of `other` replaces the member of
    /// the same name where it stands, the others follow in `other`'s order. Anything but two
    /// objects gives `other`.
    /// - Parameter other: the members to add.
    /// - Returns: the merged object.
    public func merging(_ other: JSONValue) -> JSONValue {
        guard case .object(var members) = self, case .object(let added) = other else { return other }
        for (key, value) in added {
            if let index = members.firstIndex(where: { $0.0 == key }) {
                members[index].1 = value
            } else {
                members.append((key, value))
            }
        }
        return .object(members)
    }

    /// The object with some of its own keys renamed (not those of nested objects), in place.
    /// - Parameter names: old key → new key.
    /// - Returns: the object renamed, or the value itself when it is no object.
    public func renamingKeys(_ names: [String: String]) -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.map { (names[$0.0] ?? $0.0, $0.1) })
    }

    /// Converts CBOR to JSON the way the CLI shows payloads: byte strings as lowercase hex,
    /// non-text map keys in diagnostic notation, tags as `{"tag": n, "value": …}`.
    /// - Parameter value: the CBOR value.
    public init(_ value: CBOR) {
        switch value {
        case .unsignedInt(let n): self = .uint(n)
        case .negativeInt(let n): self = n <= UInt64(Int64.max) ? .int(-1 - Int64(n)) : .string(value.diagnostic())
        case .byteString(let data): self = .string(Hex.encode(data))
        case .textString(let text): self = .string(text)
        case .array(let elements): self = .array(elements.map(JSONValue.init))
        case .map(let map):
            self = .object(map.entries.map { ($0.key.stringValue ?? $0.key.diagnostic(), JSONValue($0.value)) })
        case .tagged(let tag, let item): self = .object([("tag", .uint(tag)), ("value", JSONValue(item))])
        case .boolean(let b): self = .bool(b)
        case .null, .undefined: self = .null
        case .simple(let v): self = .object([("simple", .uint(UInt64(v)))])
        case .float(let f): self = .double(f.value)
        }
    }
}
