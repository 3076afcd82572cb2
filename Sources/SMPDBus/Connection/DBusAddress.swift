// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation

    /// A bus address: one or more `unix:` transports separated by `;`, tried in order.
    ///
    /// `unix:path=/run/dbus/system_bus_socket`, `unix:abstract=/tmp/dbus-XXXX,guid=…`. Values are
    /// percent-escaped. Other transports (`tcp:`, `launchd:`) are not supported: the system bus and
    /// BlueZ are reached over Unix sockets, the only transport that passes file descriptors.
    public struct DBusAddress: Sendable, Hashable, CustomStringConvertible {
        /// One way to reach the bus.
        public enum Endpoint: Sendable, Hashable {
            /// A socket in the file system.
            case path(String)
            /// A Linux abstract socket (its name without the leading NUL).
            case abstract(String)
        }

        /// The endpoints, in the order to try them.
        public let endpoints: [Endpoint]
        /// The address as given.
        public let description: String

        /// The system bus's default address.
        public static let defaultSystemBus = "unix:path=/var/run/dbus/system_bus_socket"

        /// Parses an address.
        /// - Parameter text: the address.
        /// - Throws: ``DBusError`` `.unsupported` when no entry is a `unix:` address with a path or
        ///   an abstract name, `.connectionFailed` when the text is malformed.
        public init(_ text: String) throws(DBusError) {
            var endpoints: [Endpoint] = []
            var unsupported: [String] = []
            for entry in text.split(separator: ";") where !entry.isEmpty {
                guard let colon = entry.firstIndex(of: ":") else {
                    throw DBusError(.connectionFailed, "bus address '\(text)': '\(entry)' has no transport")
                }
                let transport = entry[..<colon]
                var values: [String: String] = [:]
                for pair in entry[entry.index(after: colon)...].split(separator: ",") {
                    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2, let value = parts[1].removingPercentEncoding else {
                        throw DBusError(.connectionFailed, "bus address '\(text)': malformed '\(pair)'")
                    }
                    values[parts[0]] = value
                }
                if transport == "unix", let path = values["path"] {
                    endpoints.append(.path(path))
                } else if transport == "unix", let name = values["abstract"] {
                    endpoints.append(.abstract(name))
                } else {
                    unsupported.append(String(transport))
                }
            }
            guard !endpoints.isEmpty else {
                throw DBusError(
                    .unsupported,
                    "bus address '\(text)' has no unix:path= or unix:abstract= entry"
                        + (unsupported.isEmpty ? "" : " (\(unsupported.joined(separator: ", ")) not supported)")
                )
            }
            self.endpoints = endpoints
            description = text
        }

        /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, else the default socket.
        /// - Throws: ``DBusError`` when the variable holds an unusable address.
        public static func systemBus() throws(DBusError) -> DBusAddress {
            let variable = ProcessInfo.processInfo.environment["DBUS_SYSTEM_BUS_ADDRESS"] ?? ""
            return try DBusAddress(variable.isEmpty ? defaultSystemBus : variable)
        }
    }
#endif
