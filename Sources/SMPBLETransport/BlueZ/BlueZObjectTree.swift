// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPDBus

    /// BlueZ's objects as `GetManagedObjects` lists them, kept current with `InterfacesAdded`,
    /// `InterfacesRemoved` and `PropertiesChanged`: paths → interfaces → properties. Pure data.
    ///
    /// Objects are matched by their properties (`UUID`, `Address`, `Service`), never by the numbers
    /// in their paths.
    public struct BlueZObjectTree: Sendable {
        /// Interfaces and their properties, by object path.
        public private(set) var objects: [DBusObjectPath: [String: [String: DBusValue]]] = [:]

        /// An empty tree.
        public init() {}

        /// A tree from a `GetManagedObjects` reply (`a{oa{sa{sv}}}`).
        /// - Parameter managedObjects: the reply's value.
        /// - Throws: `BlueZError` when the value has another shape.
        public init(managedObjects: DBusValue) throws(BlueZError) {
            guard case .dictionary(.objectPath, _, let entries) = managedObjects else {
                throw BlueZError(
                    .protocolViolation,
                    "GetManagedObjects answered '\(managedObjects.type)', not a{oa{sa{sv}}}"
                )
            }
            for entry in entries {
                guard case .objectPath(let path) = entry.key else { continue }
                add(path, interfaces: entry.value)
            }
        }

        /// Adds interfaces to an object (`InterfacesAdded`).
        /// - Parameters:
        ///   - path: the object.
        ///   - interfaces: `a{sa{sv}}`.
        public mutating func add(_ path: DBusObjectPath, interfaces: DBusValue) {
            guard case .dictionary(_, _, let entries) = interfaces else { return }
            for entry in entries {
                guard let name = entry.key.stringValue, let properties = entry.value.stringDictionary else { continue }
                objects[path, default: [:]][name, default: [:]].merge(properties) { $1 }
            }
        }

        /// Removes interfaces (`InterfacesRemoved`); an object left with none is gone.
        /// - Parameters:
        ///   - path: the object.
        ///   - interfaces: their names.
        public mutating func remove(_ path: DBusObjectPath, interfaces: [String]) {
            for name in interfaces { objects[path]?[name] = nil }
            if objects[path]?.isEmpty == true { objects[path] = nil }
        }

        /// Updates properties (`PropertiesChanged`).
        /// - Parameters:
        ///   - path: the object.
        ///   - interface: the interface.
        ///   - changed: new values.
        ///   - invalidated: names whose values are no longer known.
        public mutating func update(
            _ path: DBusObjectPath,
            interface: String,
            changed: [String: DBusValue],
            invalidated: [String] = []
        ) {
            guard objects[path]?[interface] != nil else { return }
            objects[path]?[interface]?.merge(changed) { $1 }
            for name in invalidated { objects[path]?[interface]?[name] = nil }
        }

        /// The properties of one interface of an object.
        public func properties(_ path: DBusObjectPath, _ interface: String) -> [String: DBusValue]? {
            objects[path]?[interface]
        }

        // MARK: - Typed views

        /// The adapters, ordered by path (`hci0` first).
        public var adapters: [BlueZAdapter] {
            objects.compactMap { path, interfaces in
                interfaces[BlueZ.adapterInterface].map { BlueZAdapter(path: path, properties: $0) }
            }.sorted { $0.path < $1.path }
        }

        /// Every device, of every adapter.
        public var allDevices: [BlueZDevice] {
            objects.compactMap { path, interfaces in
                interfaces[BlueZ.deviceInterface].map { BlueZDevice(path: path, properties: $0) }
            }.sorted { $0.path < $1.path }
        }

        /// The device at a path, if BlueZ lists it.
        public func device(at path: DBusObjectPath) -> BlueZDevice? {
            objects[path]?[BlueZ.deviceInterface].map { BlueZDevice(path: path, properties: $0) }
        }

        /// The devices an adapter knows.
        /// - Parameter adapter: the adapter's path.
        /// - Returns: the devices, ordered by path.
        public func devices(on adapter: DBusObjectPath) -> [BlueZDevice] {
            objects.compactMap { path, interfaces -> BlueZDevice? in
                guard let properties = interfaces[BlueZ.deviceInterface] else { return nil }
                let device = BlueZDevice(path: path, properties: properties)
                return device.adapter == adapter || (device.adapter == nil && path.isDescendant(of: adapter))
                    ? device : nil
            }.sorted { $0.path < $1.path }
        }

        /// The SMP characteristic of a device: in a service whose `UUID` is SMP's, with SMP's `UUID`.
        /// - Parameter device: the device's path.
        /// - Returns: the characteristic, or `nil` when the device has none (yet).
        public func smpCharacteristic(of device: DBusObjectPath) -> BlueZCharacteristic? {
            let services = Set(
                objects.compactMap { path, interfaces -> DBusObjectPath? in
                    guard path.isDescendant(of: device), let service = interfaces[BlueZ.serviceInterface],
                        BlueZ.sameUUID(service["UUID"]?.stringValue, SMPGATT.serviceUUID)
                    else { return nil }
                    return path
                }
            )
            return objects.compactMap { path, interfaces -> BlueZCharacteristic? in
                guard let properties = interfaces[BlueZ.characteristicInterface],
                    BlueZ.sameUUID(properties["UUID"]?.stringValue, SMPGATT.characteristicUUID),
                    let service = properties["Service"]?.stringValue,
                    services.contains(where: { $0.rawValue == service })
                else { return nil }
                return BlueZCharacteristic(path: path, properties: properties)
            }.sorted { $0.path < $1.path }.first
        }
    }

    /// A Bluetooth adapter (`org.bluez.Adapter1`).
    public struct BlueZAdapter: Sendable, Hashable {
        /// Its path, e.g. `/org/bluez/hci0`.
        public var path: DBusObjectPath
        /// Its name: the last element of the path (`hci0`).
        public var name: String { String(path.rawValue.split(separator: "/").last ?? "") }
        /// Its address.
        public var address: String
        /// Whether it is powered.
        public var powered: Bool

        init(path: DBusObjectPath, properties: [String: DBusValue]) {
            self.path = path
            address = properties["Address"]?.stringValue ?? ""
            powered = properties["Powered"]?.boolValue ?? false
        }
    }

    /// A remote device (`org.bluez.Device1`).
    public struct BlueZDevice: Sendable, Hashable {
        /// Its path.
        public var path: DBusObjectPath
        /// Its adapter's path.
        public var adapter: DBusObjectPath?
        /// Its address, `AA:BB:CC:DD:EE:FF`.
        public var address: String
        /// The advertised or cached name.
        public var name: String?
        /// The alias (the name, unless the user set one).
        public var alias: String?
        /// Signal strength of the last advertisement, if one was seen during discovery.
        public var rssi: Int?
        /// Service UUIDs it advertised or has.
        public var uuids: [String]
        /// Whether it is connected.
        public var connected: Bool
        /// Whether its GATT services have been discovered.
        public var servicesResolved: Bool
        /// Whether it is paired.
        public var paired: Bool

        init(path: DBusObjectPath, properties: [String: DBusValue]) {
            self.path = path
            adapter = properties["Adapter"]?.stringValue.flatMap { try? DBusObjectPath($0) }
            address = properties["Address"]?.stringValue ?? ""
            name = properties["Name"]?.stringValue
            alias = properties["Alias"]?.stringValue
            rssi = properties["RSSI"]?.intValue
            uuids = properties["UUIDs"]?.stringArray ?? []
            connected = properties["Connected"]?.boolValue ?? false
            servicesResolved = properties["ServicesResolved"]?.boolValue ?? false
            paired = properties["Paired"]?.boolValue ?? false
        }

        /// The name to show: the name, else the alias, else the address.
        public var displayName: String { name ?? alias ?? address }

        /// Whether it advertises the SMP service.
        public var advertisesSMP: Bool { uuids.contains { BlueZ.sameUUID($0, SMPGATT.serviceUUID) } }

        /// Whether `target` names it: its address (any case, `:` or `_`), its name or its alias.
        /// - Parameter target: what the user typed.
        /// - Returns: whether it matches.
        public func matches(_ target: String) -> Bool {
            if let address = BlueZ.normalizedAddress(target) { return address == self.address.uppercased() }
            return name == target || alias == target
        }
    }

    /// A GATT characteristic (`org.bluez.GattCharacteristic1`).
    public struct BlueZCharacteristic: Sendable, Hashable {
        /// Its path.
        public var path: DBusObjectPath
        /// Its GATT flags, e.g. `write-without-response`, `notify`.
        public var flags: [String]
        /// The ATT MTU BlueZ reports for the link (BlueZ 5.62 and later), if it does.
        public var mtu: Int?
        /// Whether BlueZ offers `AcquireWrite` (the `WriteAcquired` property exists).
        public var offersAcquireWrite: Bool
        /// Whether BlueZ offers `AcquireNotify` (the `NotifyAcquired` property exists).
        public var offersAcquireNotify: Bool

        init(path: DBusObjectPath, properties: [String: DBusValue]) {
            self.path = path
            flags = properties["Flags"]?.stringArray ?? []
            mtu = properties["MTU"]?.intValue
            offersAcquireWrite = properties["WriteAcquired"] != nil
            offersAcquireNotify = properties["NotifyAcquired"] != nil
        }
    }
#endif
