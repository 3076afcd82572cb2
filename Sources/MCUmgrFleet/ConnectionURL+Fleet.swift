import MCUmgrConnect

/// Parses stored URLs (a namespace, so the gates read as plain functions).
enum MCUmgrConnectURL {
    static func parse(_ text: String) throws -> ConnectionURL { try ConnectionURL(parsing: text) }
}
