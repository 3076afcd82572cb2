/// Where an HCI controller is reached: a TCP socket, a Unix-domain socket, or a UART speaking H4.
///
/// The text forms are those of `ble://NAME?hci=…` and `mcumgr ble scan --hci …`:
/// `tcp://HOST:PORT`, `unix:///PATH`, and a device path (`/dev/ttyACM0`, or `serial:///dev/ttyACM0`)
/// with its baud rate and RTS/CTS given apart.
public enum HCIControllerAddress: Sendable, Hashable, CustomStringConvertible {
    /// H4 over TCP (Bumble's `tcp-server`, our rig, QEMU's `-serial tcp:…`).
    case tcp(host: String, port: UInt16)
    /// H4 over a Unix-domain stream socket.
    case unix(path: String)
    /// H4 over a UART: Zephyr's `hci_uart` sample on an nRF52840 dongle or DK.
    case serial(path: String, baudRate: Int, hardwareFlowControl: Bool)

    /// Zephyr's `hci_uart` default rate (`current-speed` of its UART in the board files).
    public static let defaultBaudRate = 1_000_000

    /// Parses a controller address.
    /// - Parameters:
    ///   - text: `tcp://HOST:PORT`, `unix:///PATH`, `serial:///dev/PATH` or `/dev/PATH`.
    ///   - baudRate: the UART's rate (serial only); Zephyr's default when `nil`.
    ///   - hardwareFlowControl: RTS/CTS on the UART (serial only; `hci_uart` needs it).
    /// - Throws: ``HCIAddressError`` naming what is wrong and the forms that work.
    public init(parsing text: String, baudRate: Int? = nil, hardwareFlowControl: Bool = true) throws(HCIAddressError) {
        if baudRate != nil, !(text.hasPrefix("/") || text.hasPrefix("serial://")) {
            throw HCIAddressError("a baud rate is for a serial controller, not '\(text)'")
        }
        if let rest = text.dropPrefix("tcp://") {
            self = try Self.parseTCP(rest, text: text)
        } else if let path = text.dropPrefix("unix://") {
            guard path.hasPrefix("/"), path.count > 1 else {
                throw HCIAddressError("'\(text)' needs an absolute socket path: unix:///tmp/hci.sock")
            }
            self = .unix(path: path)
        } else if let path = text.dropPrefix("serial://") ?? (text.hasPrefix("/") ? text : nil) {
            guard path.hasPrefix("/"), path.count > 1 else {
                throw HCIAddressError("'\(text)' needs a device path: serial:///dev/ttyACM0")
            }
            let rate = baudRate ?? Self.defaultBaudRate
            guard rate > 0 else { throw HCIAddressError("a baud rate must be positive, not \(rate)") }
            self = .serial(path: path, baudRate: rate, hardwareFlowControl: hardwareFlowControl)
        } else {
            throw HCIAddressError("'\(text)' is not a controller: use \(Self.forms)")
        }
    }

    /// The forms accepted, for messages.
    public static let forms = "tcp://HOST:PORT, unix:///PATH or /dev/PATH (a UART)"

    private static func parseTCP(_ rest: String, text: String) throws(HCIAddressError) -> HCIControllerAddress {
        // The port follows the last colon; an IPv6 host is bracketed, so its colons come before.
        guard let colon = rest.lastIndex(of: ":"), !rest[..<colon].isEmpty else {
            throw HCIAddressError("'\(text)' needs a host and a port: tcp://127.0.0.1:6402")
        }
        let host = String(rest[..<colon])
        let portText = rest[rest.index(after: colon)...]
        guard let port = UInt16(portText), port > 0 else {
            throw HCIAddressError("'\(portText)' in '\(text)' is not a port (1–65535)")
        }
        if host.contains(":"), !(host.hasPrefix("[") && host.hasSuffix("]")) {
            throw HCIAddressError("an IPv6 host goes in brackets: tcp://[::1]:\(port)")
        }
        return .tcp(host: host, port: port)
    }

    /// The text that parses back to this address (a UART's rate and RTS/CTS are given apart).
    public var location: String {
        switch self {
        case .tcp(let host, let port): "tcp://\(host):\(port)"
        case .unix(let path): "unix://\(path)"
        case .serial(let path, _, _): path
        }
    }

    public var description: String {
        switch self {
        case .tcp(let host, let port): "tcp://\(host):\(port)"
        case .unix(let path): "unix://\(path)"
        case .serial(let path, let baudRate, let flow): "\(path) at \(baudRate) baud\(flow ? "" : " without RTS/CTS")"
        }
    }
}

/// A controller address that does not parse.
public struct HCIAddressError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, and what would be right.
    public var description: String

    /// Creates an error.
    /// - Parameter description: what is wrong.
    public init(_ description: String) { self.description = description }
}

extension String {
    fileprivate func dropPrefix(_ prefix: String) -> String? {
        hasPrefix(prefix) ? String(dropFirst(prefix.count)) : nil
    }
}
