/// Hexadecimal text for bytes, as users paste it from captures and logs.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Formats bytes as lowercase hex with no separators (the CLI's JSON convention for hashes).
    /// - Parameter bytes: the bytes.
    /// - Returns: two lowercase hex digits per byte.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Parses hex text leniently: spaces, tabs, newlines, colons, dashes, commas and `0x` prefixes
    /// between bytes are ignored, upper and lower case are accepted.
    /// - Parameter text: the hex text.
    /// - Returns: the bytes, or `nil` if the text has a non-hex character or an odd number of digits.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        var cleaned = text.lowercased().replacingOccurrences0x()
        // By scalar, not Character: in a Character set "\r\n" is one grapheme, so a lone "\n"
        // would not match it.
        cleaned.unicodeScalars.removeAll { " \t\r\n:-,_".unicodeScalars.contains($0) }
        let utf8 = Array(cleaned.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}

extension String {
    /// Removes every `0x` prefix (only meaningful after lowercasing).
    fileprivate func replacingOccurrences0x() -> String {
        var result = ""
        var iterator = self.makeIterator()
        var pending: Character?
        while let c = pending ?? iterator.next() {
            pending = nil
            if c == "0", let next = iterator.next() {
                if next == "x" { continue }
                result.append(c)
                pending = next
            } else {
                result.append(c)
            }
        }
        return result
    }
}
