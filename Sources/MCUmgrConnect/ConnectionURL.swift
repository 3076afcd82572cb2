import Foundation
import SMPHCIHost

/// Where to reach a device, as people write it: on the command line (`--conn`), in a saved
/// profile, in `MCUMGR_CONN` or in a fleet inventory.
///
/// ```
/// udp://HOST[:PORT]                         (default port 1337; IPv6 as udp://[::1]:1337)
/// serial:///dev/ttyACM0?baud=115200[&framing=console|raw][&mtu=N]
/// ble://NAME-OR-ADDRESS[?adapter=hci0][&pair=1][&psm=N]
/// ble://NAME-OR-ADDRESS?hci=tcp://HOST:PORT|unix:///PATH|/dev/PATH[&baud=N][&rtscts=0]
/// sim://[?images=N&mode=swap|overwrite|direct-xip|direct-xip-revert]
/// ```
///
/// Parsing is strict — an option given twice, an unknown option, a stray bracket or a path where
/// none belongs is an error naming what is wrong — and ``description`` prints a URL that parses
/// back to the same value (names and values percent-encoded where needed), so a URL can be
/// written to an inventory or a profile and read again.
public enum ConnectionURL: Sendable, Hashable, CustomStringConvertible {
    /// UDP to a host (a name, an IPv4 address or an IPv6 address without brackets) and port.
    case udp(host: String, port: UInt16)
    /// A serial port: its path, the baud rate, raw framing (`true`) or console framing, and the
    /// largest frame the user chose (`mtu=`), if any.
    case serial(path: String, baudRate: Int, raw: Bool, maximumFrameSize: Int?)
    /// A Bluetooth LE peripheral by name, address or identifier; the adapter to use (`hci1`,
    /// BlueZ), whether to pair when the device asks for it, and, with a PSM, an L2CAP channel
    /// instead of the GATT characteristic (Apple platforms); or, with `hci`, our own LE host on
    /// that controller instead of the system's Bluetooth.
    case ble(
        name: String,
        psm: UInt16? = nil,
        adapter: String? = nil,
        pair: Bool = false,
        hci: HCIControllerAddress? = nil
    )
    /// The in-process simulated device, with its query options (`images`, `mode`, …), which the
    /// simulator itself validates.
    case simulator(options: [String: String])

    /// The schemes, as a hint in errors.
    static let forms = "udp://HOST[:PORT], serial:///dev/PATH, ble://NAME or sim://"

    /// Parses a connection string.
    /// - Parameter text: the URL.
    /// - Throws: ``ConnectionURLError`` naming what is wrong and showing the expected form.
    public init(parsing text: String) throws(ConnectionURLError) {
        guard let schemeEnd = text.range(of: "://") else {
            throw ConnectionURLError("'\(text)' has no scheme; use \(Self.forms)")
        }
        let scheme = text[..<schemeEnd.lowerBound].lowercased()
        var rest = Substring(text[schemeEnd.upperBound...])
        var query = Query(url: text)
        if let mark = rest.firstIndex(of: "?") {
            query = try Query(rest[rest.index(after: mark)...], url: text)
            rest = rest[..<mark]
        }
        if let bad = rest.first(where: { $0.isWhitespace || $0.isNewline }) {
            throw ConnectionURLError(
                "'\(text)' contains a space or control character (\(bad.unicodeScalars.first.map { "U+" + String($0.value, radix: 16, uppercase: true) } ?? "?")); percent-encode it (%20)"
            )
        }
        switch scheme {
        case "udp": self = try Self.parseUDP(rest, query: query)
        case "serial": self = try Self.parseSerial(rest, query: query)
        case "ble": self = try Self.parseBLE(rest, query: query)
        case "sim":
            guard rest.isEmpty || rest == "/" else {
                throw ConnectionURLError("sim:// takes options as a query, e.g. sim://?images=2&mode=swap")
            }
            self = .simulator(options: query.values)
        default:
            throw ConnectionURLError("unknown scheme '\(scheme)'; use \(Self.forms)")
        }
    }

    private static func parseSerial(_ path: Substring, query: Query) throws(ConnectionURLError) -> ConnectionURL {
        guard path.hasPrefix("/"), path.count > 1 else {
            throw ConnectionURLError("'\(query.url)' needs a device path, e.g. serial:///dev/ttyACM0?baud=115200")
        }
        try query.allow(["baud", "framing", "mtu"], scheme: "serial")
        let baud = try query.integer("baud", in: 1...100_000_000, what: "a positive number") ?? 115_200
        let framing = query.values["framing"]?.lowercased() ?? "console"
        guard framing == "console" || framing == "raw" else {
            throw ConnectionURLError("framing '\(framing)' is unknown; use framing=console or framing=raw")
        }
        let mtu = try query.integer("mtu", in: 16...(65_535 + 8), what: "a number from 16 to 65543")
        return .serial(path: String(path), baudRate: baud, raw: framing == "raw", maximumFrameSize: mtu)
    }

    private static func parseBLE(_ rest: Substring, query: Query) throws(ConnectionURLError) -> ConnectionURL {
        let trimmed = rest.hasSuffix("/") ? rest.dropLast() : rest
        guard !trimmed.isEmpty else {
            throw ConnectionURLError(
                "'\(query.url)' needs a device name or address: ble://NAME or ble://AA:BB:CC:DD:EE:FF"
            )
        }
        guard let name = trimmed.removingPercentEncoding, !name.isEmpty else {
            throw ConnectionURLError("'\(query.url)': the device name has a broken percent escape")
        }
        guard !trimmed.contains("/") else {
            throw ConnectionURLError("'\(query.url)': a device name has no '/'; percent-encode it (%2F)")
        }
        try query.allow(["psm", "adapter", "pair", "hci", "baud", "rtscts"], scheme: "ble")
        let psm = try query.integer("psm", in: 1...65_535, what: "a number from 1 to 65535").map { UInt16($0) }
        let adapter = try query.values["adapter"].map { value throws(ConnectionURLError) in
            guard value.hasPrefix("hci"), let number = Int(value.dropFirst(3)), number >= 0, number < 256,
                String(number) == value.dropFirst(3)
            else {
                throw ConnectionURLError("adapter '\(value)' is not a Bluetooth adapter name; use e.g. adapter=hci0")
            }
            return value
        }
        let pair = try query.values["pair"].map { value throws(ConnectionURLError) in
            switch value.lowercased() {
            case "1", "true", "yes": return true
            case "0", "false", "no": return false
            default: throw ConnectionURLError("pair '\(value)' must be 1 or 0")
            }
        }
        let hci = try parseController(query)
        if hci != nil, adapter != nil || psm != nil || pair != nil {
            throw ConnectionURLError(
                "'\(query.url)': hci= is our own host on a controller; adapter, psm and pair are BlueZ's and CoreBluetooth's"
            )
        }
        return .ble(name: name, psm: psm, adapter: adapter, pair: pair ?? false, hci: hci)
    }

    /// `hci=` (with a UART's `baud=` and `rtscts=`): the controller of our own LE host.
    private static func parseController(_ query: Query) throws(ConnectionURLError) -> HCIControllerAddress? {
        guard let text = query.values["hci"] else {
            guard query.values["baud"] == nil, query.values["rtscts"] == nil else {
                throw ConnectionURLError("'\(query.url)': baud and rtscts are for a UART controller (hci=/dev/…)")
            }
            return nil
        }
        let baud = try query.integer("baud", in: 1...100_000_000, what: "a baud rate")
        let flow = try query.values["rtscts"].map { value throws(ConnectionURLError) in
            switch value.lowercased() {
            case "1", "true", "yes": return true
            case "0", "false", "no": return false
            default: throw ConnectionURLError("rtscts '\(value)' must be 1 or 0")
            }
        }
        do throws(HCIAddressError) {
            let address = try HCIControllerAddress(parsing: text, baudRate: baud, hardwareFlowControl: flow ?? true)
            if flow != nil, case .serial = address {
            } else if flow != nil {
                throw HCIAddressError("rtscts is for a UART controller, not '\(text)'")
            }
            return address
        } catch {
            throw ConnectionURLError("'\(query.url)': hci=\(text): \(error)")
        }
    }

    public var description: String {
        switch self {
        case .udp(let host, let port):
            return host.contains(":") ? "udp://[\(host)]:\(port)" : "udp://\(host):\(port)"
        case .serial(let path, let baud, let raw, let mtu):
            return "serial://\(path)?baud=\(baud)" + (raw ? "&framing=raw" : "") + (mtu.map { "&mtu=\($0)" } ?? "")
        case .ble(let name, let psm, let adapter, let pair, let hci):
            var options: [String] = []
            if let adapter { options.append("adapter=\(adapter)") }
            if pair { options.append("pair=1") }
            if let psm { options.append("psm=\(psm)") }
            if let hci { options += Self.controllerOptions(hci) }
            return "ble://\(Self.encode(name, keeping: ":"))"
                + (options.isEmpty ? "" : "?" + options.joined(separator: "&"))
        case .simulator(let options):
            guard !options.isEmpty else { return "sim://" }
            return "sim://?"
                + options.sorted { $0.key < $1.key }.map { "\(Self.encode($0.key))=\(Self.encode($0.value))" }
                .joined(separator: "&")
        }
    }

    /// The `hci=` options that parse back to the same controller.
    private static func controllerOptions(_ hci: HCIControllerAddress) -> [String] {
        let location = "hci=" + encode(hci.location, keeping: ":/[]")
        guard case .serial(_, let baud, let flow) = hci else { return [location] }
        return [location, "baud=\(baud)"] + (flow ? [] : ["rtscts=0"])
    }

    /// Percent-encodes everything but unreserved characters (RFC 3986) and `keeping`.
    static func encode(_ text: String, keeping: String = "") -> String {
        var out = ""
        for byte in text.utf8 {
            let scalar = Unicode.Scalar(byte)
            let unreserved =
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || "-._~".unicodeScalars.contains(scalar) || keeping.unicodeScalars.contains(scalar)
            out +=
                unreserved
                ? String(Character(scalar)) : "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
        }
        return out
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
