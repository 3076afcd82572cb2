import Foundation

/// Where `mcumgr ui` listens: a host (an IPv4 or IPv6 address, or `localhost`) and a port.
public struct ListenAddress: Sendable, Hashable, CustomStringConvertible {
    /// The address, without brackets for IPv6.
    public var host: String
    /// The TCP port, 1 to 65535, or 0 until the system has chosen one (``WebServer`` listening
    /// on port 0 takes any free port and reports the one it got).
    public var port: Int

    /// Parses `HOST:PORT`, `[IPv6]:PORT` or `localhost:PORT`; port 0 asks for any free port.
    /// - Parameter text: the `--listen` value.
    /// - Throws: ``WebConfigurationError`` naming what is wrong.
    public init(parsing text: String) throws(WebConfigurationError) {
        let host: Substring
        let port: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]"), text[text.index(after: close)...].hasPrefix(":") else {
                throw WebConfigurationError("--listen: '\(text)' is not [IPv6]:PORT, e.g. [::1]:8080")
            }
            host = text[text.index(after: text.startIndex)..<close]
            port = text[text.index(close, offsetBy: 2)...]
        } else {
            guard let colon = text.lastIndex(of: ":"), !text[..<colon].contains(":") else {
                throw WebConfigurationError("--listen: '\(text)' is not HOST:PORT, e.g. 127.0.0.1:8080")
            }
            host = text[..<colon]
            port = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { throw WebConfigurationError("--listen: '\(text)' names no host") }
        guard let number = Int(port), (0...65535).contains(number) else {
            throw WebConfigurationError(
                "--listen: the port in '\(text)' must be a number from 0 to 65535 (0: any free port)"
            )
        }
        self.init(host: String(host), port: number)
    }

    /// Creates an address.
    /// - Parameters:
    ///   - host: an address or `localhost`.
    ///   - port: the TCP port.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Only this machine can reach it: `localhost`, `127.0.0.0/8` or `::1`.
    public var isLoopback: Bool {
        if host == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Every interface: `0.0.0.0` or `::`.
    public var isWildcard: Bool { host == "0.0.0.0" || host == "::" }

    /// The address to open from this machine: a wildcard address is not one to connect to.
    public var local: ListenAddress {
        isWildcard ? ListenAddress(host: host == "::" ? "::1" : "127.0.0.1", port: port) : self
    }

    /// The host as it appears in a URL and a `Host` header (IPv6 in brackets).
    public var urlHost: String { host.contains(":") ? "[\(host)]" : host }

    /// `HOST:PORT` as a browser writes it in the `Host` header.
    public var description: String { "\(urlHost):\(port)" }

    /// The `Host` header values a request may carry: this address, and `localhost:PORT` for a
    /// loopback address. Anything else is a page from another name resolving here (DNS
    /// rebinding) and is turned away.
    ///
    /// A loopback server also takes a bare `localhost`: a rebound name cannot produce it (a page
    /// on another name sends its own), and a local client that leaves the port out sends it.
    var acceptedHosts: Set<String> {
        var hosts: Set<String> = [description.lowercased()]
        if isLoopback || isWildcard { hosts.formUnion(["localhost:\(port)", "localhost"]) }
        return hosts
    }

    /// Whether a `Host` header names this server. On a wildcard address the machine's names are
    /// unknown, so any IP address with our port is taken: rebinding needs a DNS name, and an
    /// address literal is none.
    /// - Parameter host: the header's value, lowercased.
    func accepts(host: String) -> Bool {
        if acceptedHosts.contains(host) { return true }
        guard isWildcard, let address = try? ListenAddress(parsing: host), address.port == port else { return false }
        return Self.isAddressLiteral(address.host)
    }

    /// An IPv4 dotted quad or an IPv6 address (hex digits, colons, dots).
    static func isAddressLiteral(_ host: String) -> Bool {
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        if parts.count == 4, parts.allSatisfy({ !$0.isEmpty && UInt8($0) != nil }) { return true }
        return host.contains(":") && host.allSatisfy { $0.isHexDigit || $0 == ":" || $0 == "." }
    }
}

/// A `mcumgr ui` setting that cannot be used: one line naming the option and what to give.
public struct WebConfigurationError: Error, Sendable, CustomStringConvertible {
    /// The line for people.
    public var description: String

    /// Creates the error.
    /// - Parameter description: the line for people.
    public init(_ description: String) { self.description = description }
}
