// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPBytes
    import SMPDBus

    /// Names from BlueZ's D-Bus API (`org.bluez`) and small helpers shared by the central and the
    /// scanner.
    public enum BlueZ {
        /// BlueZ's bus name.
        public static let service = "org.bluez"
        /// `org.bluez.Adapter1`.
        public static let adapterInterface = "org.bluez.Adapter1"
        /// `org.bluez.Device1`.
        public static let deviceInterface = "org.bluez.Device1"
        /// `org.bluez.GattService1`.
        public static let serviceInterface = "org.bluez.GattService1"
        /// `org.bluez.GattCharacteristic1`.
        public static let characteristicInterface = "org.bluez.GattCharacteristic1"
        /// `org.bluez.AgentManager1`.
        public static let agentManagerInterface = "org.bluez.AgentManager1"
        /// `org.freedesktop.DBus.Properties`.
        public static let propertiesInterface = "org.freedesktop.DBus.Properties"
        /// `org.freedesktop.DBus.ObjectManager`.
        public static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"

        /// Whether two UUID strings name the same UUID (case-insensitive; 16-bit short forms
        /// expanded on the Bluetooth base UUID).
        public static func sameUUID(_ a: String?, _ b: String?) -> Bool {
            guard let a, let b else { return false }
            return expanded(a) == expanded(b)
        }

        private static func expanded(_ uuid: String) -> String {
            let lower = uuid.lowercased()
            if lower.count == 4 || lower.count == 8 {
                return String(repeating: "0", count: 8 - lower.count) + lower + "-0000-1000-8000-00805f9b34fb"
            }
            return lower
        }

        /// `AA:BB:CC:DD:EE:FF` in upper case when `text` is a Bluetooth address (`:`, `-` or `_`
        /// separated), else `nil`.
        public static func normalizedAddress(_ text: String) -> String? {
            let parts = text.split(omittingEmptySubsequences: false) { $0 == ":" || $0 == "_" || $0 == "-" }
            guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isHexDigit) }) else {
                return nil
            }
            return parts.joined(separator: ":").uppercased()
        }

        /// Reads BlueZ's whole object tree.
        static func managedObjects(_ connection: DBusConnection) async throws -> BlueZObjectTree {
            let reply = try await connection.call(
                destination: service,
                path: .root,
                interface: objectManagerInterface,
                member: "GetManagedObjects"
            )
            guard let value = reply.message.body.first else {
                throw BlueZError(.protocolViolation, "GetManagedObjects answered nothing")
            }
            return try BlueZObjectTree(managedObjects: value)
        }

        /// Reads one property of a BlueZ object.
        static func property(
            _ connection: DBusConnection,
            _ path: DBusObjectPath,
            _ interface: String,
            _ name: String
        ) async throws -> DBusValue? {
            let reply = try await connection.call(
                destination: service,
                path: path,
                interface: propertiesInterface,
                member: "Get",
                body: [.string(interface), .string(name)]
            )
            guard case .variant(let value)? = reply.message.body.first else { return nil }
            return value
        }
    }
#endif
