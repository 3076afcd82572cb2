// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPBytes
    import SMPDBus
    import SMPLink

    /// Why BlueZ could not give us a link, in words a user can act on. The transport hands it on as
    /// an `SMPTransportError` (``transportError``) so every link failure reads and exits alike.
    ///
    /// Equality compares ``code`` only.
    public struct BlueZError: CodedError {
        /// What went wrong. An open set.
        public struct Code: Sendable, Hashable, CustomStringConvertible {
            private enum Kind: Sendable, Hashable {
                case busUnavailable, notRunning, accessDenied, noAdapter, adapterOff, notFound, pairingRequired
                case noSMPService, connectionFailed, disconnected, protocolViolation
            }
            private let kind: Kind

            /// The system bus cannot be reached.
            public static let busUnavailable = Code(kind: .busUnavailable)
            /// Nobody owns `org.bluez` (bluetoothd is not running).
            public static let notRunning = Code(kind: .notRunning)
            /// The bus policy does not let this user talk to BlueZ.
            public static let accessDenied = Code(kind: .accessDenied)
            /// No adapter, or not the one asked for.
            public static let noAdapter = Code(kind: .noAdapter)
            /// The adapter is powered off.
            public static let adapterOff = Code(kind: .adapterOff)
            /// The device was not found within the scan timeout.
            public static let notFound = Code(kind: .notFound)
            /// The device wants an encrypted, authenticated link.
            public static let pairingRequired = Code(kind: .pairingRequired)
            /// The device has no SMP service or characteristic.
            public static let noSMPService = Code(kind: .noSMPService)
            /// Connecting or subscribing failed.
            public static let connectionFailed = Code(kind: .connectionFailed)
            /// The link went away.
            public static let disconnected = Code(kind: .disconnected)
            /// BlueZ answered something its API does not allow.
            public static let protocolViolation = Code(kind: .protocolViolation)

            public var description: String {
                switch kind {
                case .busUnavailable: "system bus unavailable"
                case .notRunning: "BlueZ not running"
                case .accessDenied: "access denied"
                case .noAdapter: "no adapter"
                case .adapterOff: "adapter off"
                case .notFound: "not found"
                case .pairingRequired: "pairing required"
                case .noSMPService: "no SMP service"
                case .connectionFailed: "connection failed"
                case .disconnected: "disconnected"
                case .protocolViolation: "protocol violation"
                }
            }
        }

        /// What went wrong.
        public var code: Code
        /// One line: what failed and what to try.
        public var message: String
        /// The D-Bus error underneath, if any.
        public var cause: (any Error & Sendable)?

        /// Creates an error.
        /// - Parameters:
        ///   - code: what went wrong.
        ///   - message: what failed and what to try.
        ///   - cause: the underlying error.
        public init(_ code: Code, _ message: String, cause: (any Error & Sendable)? = nil) {
            self.code = code
            self.message = message
            self.cause = cause
        }

        public var description: String { codedDescription(prefix: "BlueZ: ") }

        /// The same failure as a link error: `.unavailable` when Bluetooth itself cannot be used
        /// here (no bus, BlueZ, permission, adapter), `.disconnected` for a lost link, else
        /// `.connectionFailed`. The message is kept as it is (one line for the user) and the cause is
        /// the D-Bus error underneath, so the line says each thing once.
        public var transportError: SMPTransportError {
            let linkCode: SMPTransportError.Code =
                switch code {
                case .busUnavailable, .notRunning, .accessDenied, .noAdapter, .adapterOff: .unavailable
                case .disconnected: .disconnected
                default: .connectionFailed
                }
            return SMPTransportError(linkCode, message, cause: cause)
        }

        /// Whether a D-Bus error from BlueZ means the device wants pairing (insufficient
        /// authentication, authorization or encryption).
        static func meansPairing(_ error: DBusRemoteError) -> Bool {
            let text = (error.name + " " + error.message).lowercased()
            return error.name == "org.bluez.Error.NotAuthorized" || error.name == "org.bluez.Error.AuthenticationFailed"
                || text.contains("insufficient") || text.contains("not paired") || text.contains("authentication")
                || text.contains("encryption") || text.contains("0x05") || text.contains("0x0f")
        }

        /// bluezoo (the BlueZ mock of docs/BLE.md) connects a device once per process: the second
        /// `Connect` exports its GATT objects again and sd-bus refuses with EEXIST, a line of C
        /// internals that tells a user nothing.
        static func meansBluezooReconnect(_ error: DBusRemoteError) -> Bool {
            error.name == "org.freedesktop.DBus.Error.Failed" && error.message.contains("sd_bus_add_object_vtable")
                && error.message.contains("error number: 17")
        }

        /// A failed call to BlueZ in user terms.
        /// - Parameters:
        ///   - error: what the call threw.
        ///   - doing: what we were doing, e.g. "connecting to 'Zephyr'".
        ///   - address: the device's address, for the pairing hint.
        /// - Returns: the error.
        static func from(_ error: any Error, doing: String, address: String? = nil) -> BlueZError {
            if let error = error as? BlueZError { return error }
            if let remote = error as? DBusRemoteError {
                switch remote.name {
                case "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner":
                    return notRunningError(remote)
                case "org.freedesktop.DBus.Error.AccessDenied":
                    return BlueZError(
                        .accessDenied,
                        "the D-Bus policy does not let this user talk to BlueZ; run as root or as a member of the 'bluetooth' group",
                        cause: remote
                    )
                default:
                    if meansPairing(remote), let address {
                        return pairingError(address: address, cause: remote)
                    }
                    if meansBluezooReconnect(remote) {
                        return BlueZError(
                            .connectionFailed,
                            "\(doing): bluezoo, the BlueZ mock, cannot connect a device it connected before; "
                                + "restart it (kill -HUP the pid of scripts/bluezoo-bus.sh, see docs/BLE.md)"
                        )
                    }
                    return BlueZError(.connectionFailed, doing, cause: remote)
                }
            }
            if let dbus = error as? DBusError, dbus.code == .disconnected {
                return BlueZError(.disconnected, "\(doing): the system bus connection closed", cause: dbus)
            }
            return BlueZError(.connectionFailed, doing, cause: error)
        }

        static func notRunningError(_ cause: (any Error & Sendable)? = nil) -> BlueZError {
            BlueZError(
                .notRunning,
                "BlueZ (org.bluez) is not running on the system bus; start it with 'systemctl start bluetooth'",
                cause: cause
            )
        }

        static func pairingError(address: String, cause: (any Error & Sendable)?) -> BlueZError {
            BlueZError(
                .pairingRequired,
                "\(address) needs pairing (insufficient authentication or encryption): run 'bluetoothctl pair \(address)' "
                    + "or add ?pair=1 to the ble:// URL",
                cause: cause
            )
        }
    }
#endif
