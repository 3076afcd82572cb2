import Foundation
import SMPBytes

extension CBOR: CustomStringConvertible {
    /// RFC 8949 §8 diagnostic notation, e.g. `{"off": 32, "data": h'0001'}`: the readable form
    /// for logs and the CLI. Byte strings longer than 64 bytes are abbreviated with their length.
    public var description: String { diagnostic(abbreviateBytesOver: 64) }

    /// RFC 8949 §8 diagnostic notation.
    /// - Parameter limit: byte strings longer than this show their first `limit` bytes and the
    ///   total length; `nil` shows every byte.
    /// - Returns: the notation.
    public func diagnostic(abbreviateBytesOver limit: Int? = nil) -> String {
        switch self {
        case .unsignedInt(let n): return "\(n)"
        case .negativeInt(let n): return n == .max ? "-18446744073709551616" : "-\(n + 1)"
        case .byteString(let data):
            if let limit, data.count > limit {
                return "h'\(Hex.encode(data.prefix(limit)))…' (\(data.count) bytes)"
            }
            return "h'\(Hex.encode(data))'"
        case .textString(let text): return CBOR.quoted(text)
        case .array(let elements):
            return "[" + elements.map { $0.diagnostic(abbreviateBytesOver: limit) }.joined(separator: ", ") + "]"
        case .map(let map):
            return "{"
                + map.entries.map {
                    "\($0.key.diagnostic(abbreviateBytesOver: limit)): \($0.value.diagnostic(abbreviateBytesOver: limit))"
                }.joined(separator: ", ") + "}"
        case .tagged(let tag, let item): return "\(tag)(\(item.diagnostic(abbreviateBytesOver: limit)))"
        case .boolean(let b): return b ? "true" : "false"
        case .null: return "null"
        case .undefined: return "undefined"
        case .simple(let v): return "simple(\(v))"
        case .float(let f):
            if f.value.isNaN { return "NaN" }
            if f.value.isInfinite { return f.value < 0 ? "-Infinity" : "Infinity" }
            let suffix =
                switch f.width {
                case .half: "_1"
                case .single: "_2"
                case .double: "_3"
                }
            // The encoding indicator is only shown when the width is not the preferred one.
            return CBORFloat(f.value).width == f.width ? "\(f.value)" : "\(f.value)\(suffix)"
        }
    }
}

extension CBOR {
    /// Text as a JSON string literal: quotes, backslashes and control characters escaped.
    /// Diagnostic notation writes text strings this way (RFC 8949 §8), and so does the CLI's JSON.
    /// - Parameter text: the text.
    /// - Returns: the quoted literal.
    public static func quoted(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 {
                    out += String(format: "\\u%04x", scalar.value)
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }
}
