import Foundation

/// Where the CLI connects, parsed from `--conn`, a profile or `MCUMGR_CONN`.
///
/// ```
/// udp://HOST[:PORT]                         (default port 1337; IPv6 as udp://[::1]:1337)
/// serial:///dev/ttyACM0?baud=115200[&framing=console|raw][&mtu=N]
/// ble://NAME-OR-IDENTIFIER[?psm=N]          (Apple platforms; psm: an L2CAP channel)
/// sim://[?images=N&mode=swap|overwrite|direct-xip|direct-xip-revert]
/// ```
public enum ConnectionURL: Sendable, Hashable, CustomStringConvertible {
    /// UDP to a host and port.
    case udp(host: String, port: UInt16)
    /// A serial port.
    case serial(path: String, baudRate: Int, raw: Bool, maximumFrameSize: Int?)
    /// A Bluetooth LE peripheral by name or identifier; with a PSM, over an L2CAP channel
    /// instead of the GATT characteristic.
    case ble(name: String, psm: UInt16?)
    /// The in-process simulated device, with its query options (`images`, `mode`, …).
    case simulator(options: [String: String])

    /// Parses a connection string.
    /// - Parameter text: the URL.
    /// - Throws: ``ConnectionURLError`` naming what is wrong and showing the expected form.
    public init(parsing text: String) throws(ConnectionURLError) {
        guard let schemeEnd = text.range(of: "://") else {
            throw ConnectionURLError(
                "'\(text)' has no scheme; use udp://HOST[:PORT], serial:///dev/PATH, ble://NAME or sim://"
            )
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        var rest = String(text[schemeEnd.upperBound...])
        var query: [String: String] = [:]
        if let mark = rest.firstIndex(of: "?") {
            for pair in rest[rest.index(after: mark)...].split(separator: "&") where !pair.isEmpty {
                // Empty pieces kept: "=" is a pair with no name, not no pair (found by fuzzing).
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                    .map(String.init)
                guard let name = parts.first, !name.isEmpty else {
                    throw ConnectionURLError("'\(text)' has a query option without a name ('\(pair)')")
                }
                query[name.lowercased()] = parts.count > 1 ? (parts[1].removingPercentEncoding ?? parts[1]) : ""
            }
            rest = String(rest[..<mark])
        }
        switch scheme {
        case "udp":
            self = try ConnectionURL.parseUDP(rest, original: text)
        case "serial":
            guard !rest.isEmpty, rest.hasPrefix("/") else {
                throw ConnectionURLError("'\(text)' needs a device path, e.g. serial:///dev/ttyACM0?baud=115200")
            }
            let baud =
                try query["baud"].map { value throws(ConnectionURLError) in
                    guard let baud = Int(value), baud > 0 else {
                        throw ConnectionURLError("baud '\(value)' is not a positive number")
                    }
                    return baud
                } ?? 115_200
            let framing = query["framing"]?.lowercased() ?? "console"
            guard framing == "console" || framing == "raw" else {
                throw ConnectionURLError("framing '\(framing)' is unknown; use framing=console or framing=raw")
            }
            let mtu = try query["mtu"].map { value throws(ConnectionURLError) in
                guard let mtu = Int(value), mtu >= 16, mtu <= 65_535 + 8 else {
                    throw ConnectionURLError("mtu '\(value)' must be a number from 16 to 65543")
                }
                return mtu
            }
            let unknown = Set(query.keys).subtracting(["baud", "framing", "mtu"])
            guard unknown.isEmpty else {
                throw ConnectionURLError("unknown serial option \(unknown.sorted().joined(separator: ", "))")
            }
            self = .serial(path: rest, baudRate: baud, raw: framing == "raw", maximumFrameSize: mtu)
        case "ble":
            guard !rest.isEmpty else {
                throw ConnectionURLError("'\(text)' needs a device name or identifier: ble://NAME")
            }
            let psm = try query["psm"].map { value throws(ConnectionURLError) in
                guard let psm = UInt16(value), psm > 0 else {
                    throw ConnectionURLError("psm '\(value)' must be a number from 1 to 65535")
                }
                return psm
            }
            let unknown = Set(query.keys).subtracting(["psm"])
            guard unknown.isEmpty else {
                throw ConnectionURLError("unknown ble option \(unknown.sorted().joined(separator: ", "))")
            }
            self = .ble(name: rest.removingPercentEncoding ?? rest, psm: psm)
        case "sim":
            guard rest.isEmpty || rest == "/" || rest == "device" else {
                throw ConnectionURLError("sim:// takes options as a query, e.g. sim://?images=2&mode=swap")
            }
            self = .simulator(options: query)
        default:
            throw ConnectionURLError("unknown scheme '\(scheme)'; use udp://, serial://, ble:// or sim://")
        }
    }

    private static func parseUDP(_ authority: String, original: String) throws(ConnectionURLError) -> ConnectionURL {
        var host: String
        var portText: String?
        let trimmed = authority.hasSuffix("/") ? String(authority.dropLast()) : authority
        if trimmed.hasPrefix("[") {
            guard let close = trimmed.firstIndex(of: "]") else {
                throw ConnectionURLError("'\(original)': unclosed '[' in an IPv6 address")
            }
            host = String(trimmed[trimmed.index(after: trimmed.startIndex)..<close])
            let after = trimmed[trimmed.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw ConnectionURLError("'\(original)': expected ':PORT' after the IPv6 address")
                }
                portText = String(after.dropFirst())
            }
        } else {
            let colons = trimmed.filter { $0 == ":" }.count
            if colons == 1, let colon = trimmed.lastIndex(of: ":") {
                host = String(trimmed[..<colon])
                portText = String(trimmed[trimmed.index(after: colon)...])
            } else {
                // A bare IPv6 address (several colons) has no port; brackets are needed for one.
                host = trimmed
            }
        }
        guard !host.isEmpty else {
            throw ConnectionURLError("'\(original)' needs a host, e.g. udp://192.168.1.10:1337")
        }
        var port: UInt16 = 1337
        if let portText {
            guard let value = UInt16(portText), value > 0 else {
                throw ConnectionURLError("port '\(portText)' in '\(original)' must be a number from 1 to 65535")
            }
            port = value
        }
        return .udp(host: host, port: port)
    }

    public var description: String {
        switch self {
        case .udp(let host, let port): host.contains(":") ? "udp://[\(host)]:\(port)" : "udp://\(host):\(port)"
        case .serial(let path, let baud, let raw, let mtu):
            "serial://\(path)?baud=\(baud)" + (raw ? "&framing=raw" : "") + (mtu.map { "&mtu=\($0)" } ?? "")
        case .ble(let name, let psm): "ble://\(name)" + (psm.map { "?psm=\($0)" } ?? "")
        case .simulator(let options):
            options.isEmpty
                ? "sim://"
                : "sim://?" + options.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        }
    }
}

/// A connection string that cannot be used, with what is wrong and what is expected.
public struct ConnectionURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The explanation.
    public var message: String
    /// Creates an error.
    /// - Parameter message: the explanation.
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
