import Foundation

extension ConnectionURL {
    /// The query of a connection URL: option names (lower case) to percent-decoded values, each
    /// name at most once.
    struct Query {
        /// The whole URL, for messages.
        let url: String
        private(set) var values: [String: String] = [:]

        /// An empty query.
        init(url: String) { self.url = url }

        /// Parses `name=value&name=value` (a name without `=` has the empty value).
        init(_ text: Substring, url: String) throws(ConnectionURLError) {
            self.url = url
            for pair in text.split(separator: "&") where !pair.isEmpty {
                // Empty pieces kept: "=" is a pair with no name, not no pair (found by fuzzing).
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                guard let rawName = parts.first, !rawName.isEmpty else {
                    throw ConnectionURLError("'\(url)' has a query option without a name ('\(pair)')")
                }
                guard let name = rawName.removingPercentEncoding?.lowercased(),
                    let value = parts.count > 1 ? parts[1].removingPercentEncoding : ""
                else {
                    throw ConnectionURLError("'\(url)': option '\(pair)' has a broken percent escape")
                }
                guard values[name] == nil else {
                    throw ConnectionURLError("'\(url)' gives option '\(name)' twice")
                }
                values[name] = value
            }
        }

        /// Refuses options other than `known`.
        func allow(_ known: Set<String>, scheme: String) throws(ConnectionURLError) {
            let unknown = Set(values.keys).subtracting(known)
            guard unknown.isEmpty else {
                let accepted = known.isEmpty ? "it takes none" : "it takes \(known.sorted().joined(separator: ", "))"
                throw ConnectionURLError(
                    "unknown \(scheme) option \(unknown.sorted().joined(separator: ", ")) (\(accepted))"
                )
            }
        }

        /// An integer option within `range`, or `nil` when absent.
        func integer(_ name: String, in range: ClosedRange<Int>, what: String) throws(ConnectionURLError) -> Int? {
            guard let text = values[name] else { return nil }
            guard let value = Int(text), range.contains(value) else {
                throw ConnectionURLError("\(name) '\(text)' must be \(what)")
            }
            return value
        }
    }

    /// `HOST[:PORT]`, `[IPV6][:PORT]` or a bare IPv6 address, with at most a trailing `/`.
    static func parseUDP(_ authority: Substring, query: Query) throws(ConnectionURLError) -> ConnectionURL {
        let original = query.url
        let trimmed = authority.hasSuffix("/") ? authority.dropLast() : authority
        guard !trimmed.contains("/") else {
            throw ConnectionURLError("'\(original)': udp:// takes no path, only HOST[:PORT]")
        }
        try query.allow([], scheme: "udp")
        var host: Substring
        var portText: Substring?
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else {
                throw ConnectionURLError("'\(original)': unclosed '[' in an IPv6 address")
            }
            host = trimmed[trimmed.index(after: trimmed.startIndex)..<close]
            let after = trimmed[trimmed.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw ConnectionURLError("'\(original)': expected ':PORT' after the IPv6 address")
                }
                portText = after.dropFirst()
            }
            try checkIPv6(host, original: original)
        } else if trimmed.filter({ $0 == ":" }).count > 1 {
            // A bare IPv6 address has no port; brackets are needed for one.
            host = trimmed
            try checkIPv6(host, original: original)
        } else {
            if let colon = trimmed.firstIndex(of: ":") {
                host = trimmed[..<colon]
                portText = trimmed[trimmed.index(after: colon)...]
            } else {
                host = trimmed
            }
            try checkHostName(host, original: original)
        }
        guard !host.isEmpty else {
            throw ConnectionURLError("'\(original)' needs a host, e.g. udp://192.168.1.10:1337")
        }
        var port: UInt16 = 1337
        if let portText {
            guard portText.allSatisfy(\.isASCII), let value = UInt16(portText), value > 0 else {
                throw ConnectionURLError("port '\(portText)' in '\(original)' must be a number from 1 to 65535")
            }
            port = value
        }
        return .udp(host: String(host), port: port)
    }

    /// A host name or IPv4 address: letters, digits, `-`, `.` and `_`.
    private static func checkHostName(_ host: Substring, original: String) throws(ConnectionURLError) {
        if let bad = host.first(where: { !($0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0))) }) {
            let hint = bad == "]" || bad == "[" ? "; an IPv6 address goes in brackets: udp://[fe80::1]:1337" : ""
            throw ConnectionURLError("'\(original)': '\(bad)' cannot appear in a host name\(hint)")
        }
    }

    /// An IPv6 literal: hex digits, `:` and `.` (an embedded IPv4), then an optional `%zone`.
    private static func checkIPv6(_ host: Substring, original: String) throws(ConnectionURLError) {
        let parts = host.split(separator: "%", maxSplits: 1, omittingEmptySubsequences: false)
        let address = parts[0]
        let validAddress =
            address.filter { $0 == ":" }.count >= 2
            && address.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
        let zone = parts.count > 1 ? parts[1] : nil
        let validZone =
            zone.map {
                !$0.isEmpty && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._".contains($0)) }
            } ?? true
        guard validAddress, validZone else {
            throw ConnectionURLError("'\(original)': '\(host)' is not an IPv6 address, e.g. udp://[fe80::1%eth0]:1337")
        }
    }
}
