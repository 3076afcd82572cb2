// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    /// A method call made to one of our exported objects.
    public struct DBusMethodCall: Sendable {
        /// The call (its body holds the arguments, already checked against the method's signature).
        public let message: DBusMessage
        /// Descriptors that came with it.
        public let descriptors: DBusFileDescriptors

        /// The arguments.
        public var arguments: [DBusValue] { message.body }
        /// The caller's unique bus name.
        public var sender: String? { message.sender }
    }

    /// What a method handler answers.
    public struct DBusMethodReply: Sendable {
        /// The values (they must have the method's output signature).
        public var values: [DBusValue]
        /// Descriptors to send with the reply (the body's `h` values index them); closed on our side
        /// once sent.
        public var descriptors: [Int32]

        /// Creates a reply.
        /// - Parameters:
        ///   - values: the values.
        ///   - descriptors: descriptors to pass, owned by the reply.
        public init(_ values: [DBusValue] = [], descriptors: [Int32] = []) {
            self.values = values
            self.descriptors = descriptors
        }
    }

    /// One method of an exported interface.
    public struct DBusMethod: Sendable {
        /// The arguments' types; a call with other types gets `org.freedesktop.DBus.Error.InvalidArgs`.
        public var input: DBusSignature
        /// The reply's types.
        public var output: DBusSignature
        /// Answers a call; throws a ``DBusRemoteError`` to reply with that error (any other error
        /// replies `org.freedesktop.DBus.Error.Failed`).
        public var handler: @Sendable (DBusMethodCall) async throws -> DBusMethodReply

        /// Creates a method.
        /// - Parameters:
        ///   - input: the arguments' signature.
        ///   - output: the reply's signature.
        ///   - handler: answers a call.
        public init(
            input: DBusSignature = .empty,
            output: DBusSignature = .empty,
            handler: @escaping @Sendable (DBusMethodCall) async throws -> DBusMethodReply
        ) {
            self.input = input
            self.output = output
            self.handler = handler
        }
    }

    /// One property of an exported interface, read (and written) through
    /// `org.freedesktop.DBus.Properties`.
    public struct DBusProperty: Sendable {
        /// The property's type.
        public var type: DBusType
        /// Reads the current value.
        public var get: @Sendable () -> DBusValue
        /// Writes a value (checked against ``type`` first); `nil` for a read-only property.
        public var set: (@Sendable (DBusValue) throws -> Void)?

        /// Creates a property.
        /// - Parameters:
        ///   - type: its type.
        ///   - get: reads it.
        ///   - set: writes it, or `nil` when read-only.
        public init(
            _ type: DBusType,
            get: @escaping @Sendable () -> DBusValue,
            set: (@Sendable (DBusValue) throws -> Void)? = nil
        ) {
            self.type = type
            self.get = get
            self.set = set
        }

        /// A constant, read-only property.
        /// - Parameter value: the value.
        /// - Returns: the property.
        public static func constant(_ value: DBusValue) -> DBusProperty {
            DBusProperty(value.type, get: { value })
        }
    }

    /// One interface of an exported object.
    public struct DBusInterface: Sendable {
        /// The interface name, e.g. `org.bluez.GattCharacteristic1`.
        public var name: String
        /// Methods by member name.
        public var methods: [String: DBusMethod]
        /// Properties by name.
        public var properties: [String: DBusProperty]
        /// Signals it emits, by name, for introspection.
        public var signals: [String: DBusSignature]

        /// Creates an interface.
        /// - Parameters:
        ///   - name: the interface name.
        ///   - methods: methods by member name.
        ///   - properties: properties by name.
        ///   - signals: signals by name.
        public init(
            name: String,
            methods: [String: DBusMethod] = [:],
            properties: [String: DBusProperty] = [:],
            signals: [String: DBusSignature] = [:]
        ) {
            self.name = name
            self.methods = methods
            self.properties = properties
            self.signals = signals
        }

        /// The properties' current values (what `GetAll` and `InterfacesAdded` carry), sorted by name.
        public var currentProperties: DBusValue {
            .options(properties.sorted { $0.key < $1.key }.map { ($0.key, $0.value.get()) })
        }
    }

    /// An object we export on the bus.
    public struct DBusExportedObject: Sendable {
        /// Its path.
        public var path: DBusObjectPath
        /// Its interfaces (the standard ones — Properties, Introspectable, Peer — are added by the
        /// connection).
        public var interfaces: [DBusInterface]

        /// Creates an object.
        /// - Parameters:
        ///   - path: its path.
        ///   - interfaces: its interfaces.
        public init(path: DBusObjectPath, interfaces: [DBusInterface]) {
            self.path = path
            self.interfaces = interfaces
        }

        /// The interface of that name.
        public func interface(_ name: String) -> DBusInterface? {
            interfaces.first { $0.name == name }
        }
    }
#endif
