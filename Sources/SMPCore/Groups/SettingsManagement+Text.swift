import Foundation

extension SettingsManagement.Read.Response {
    /// The value as text when it is valid UTF-8 with no control characters but tab, line feed and
    /// carriage return (which a terminal shows as written); `nil` otherwise, for a value to be
    /// shown in hex. The rule of `mcumgr settings read` and the web page's Settings screen alike.
    public var printableText: String? { SettingsManagement.printableText(value) }
}

extension SettingsManagement {
    /// Bytes as text when they are printable UTF-8 (see
    /// ``SettingsManagement/Read/Response/printableText``), else `nil`.
    /// - Parameter value: a setting's bytes.
    public static func printableText(_ value: Data) -> String? {
        guard let decoded = String(data: value, encoding: .utf8) else { return nil }
        let allowed: Set<Unicode.Scalar> = ["\t", "\n", "\r"]
        let printable = decoded.unicodeScalars.allSatisfy {
            allowed.contains($0) || $0.properties.generalCategory != .control
        }
        return printable ? decoded : nil
    }
}
