// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPBytes

    /// One D-Bus message: the fixed header, the header fields, and the body.
    ///
    /// Pure data: file descriptors travel beside a message (``DBusConnection`` passes them), the
    /// message holds only their count (`UNIX_FDS`) and the body's `h` values index them.
    public struct DBusMessage: Sendable, Hashable {
        /// The message type.
        public enum Kind: UInt8, Sendable, Hashable {
            case methodCall = 1
            case methodReturn = 2
            case error = 3
            case signal = 4
        }

        /// Header flags.
        public struct Flags: OptionSet, Sendable, Hashable {
            public let rawValue: UInt8
            public init(rawValue: UInt8) { self.rawValue = rawValue }
            /// The caller wants no reply.
            public static let noReplyExpected = Flags(rawValue: 0x1)
            /// The bus must not start a service for the destination.
            public static let noAutoStart = Flags(rawValue: 0x2)
            /// The caller accepts an interactive authorization prompt.
            public static let allowInteractiveAuthorization = Flags(rawValue: 0x4)
        }

        /// The specification's limit on a whole message (128 MiB).
        public static let maximumLength = 1 << 27
        /// The size of the fixed header plus the header-field array's length.
        public static let prefixLength = 16

        public var kind: Kind
        public var flags: Flags
        /// The sender's serial number for this message (not zero on the wire).
        public var serial: UInt32
        public var path: DBusObjectPath?
        public var interface: String?
        public var member: String?
        public var errorName: String?
        public var replySerial: UInt32?
        public var destination: String?
        public var sender: String?
        /// Descriptors that travel with the message.
        public var unixFDCount: UInt32
        /// The body's values; the `SIGNATURE` field is theirs.
        public var body: [DBusValue]

        /// Creates a message.
        public init(
            kind: Kind,
            flags: Flags = [],
            serial: UInt32 = 0,
            path: DBusObjectPath? = nil,
            interface: String? = nil,
            member: String? = nil,
            errorName: String? = nil,
            replySerial: UInt32? = nil,
            destination: String? = nil,
            sender: String? = nil,
            unixFDCount: UInt32 = 0,
            body: [DBusValue] = []
        ) {
            self.kind = kind
            self.flags = flags
            self.serial = serial
            self.path = path
            self.interface = interface
            self.member = member
            self.errorName = errorName
            self.replySerial = replySerial
            self.destination = destination
            self.sender = sender
            self.unixFDCount = unixFDCount
            self.body = body
        }

        /// The body's signature.
        public var signature: DBusSignature { DBusSignature(body.map(\.type)) }

        /// A method call.
        public static func methodCall(
            destination: String?,
            path: DBusObjectPath,
            interface: String?,
            member: String,
            body: [DBusValue] = [],
            flags: Flags = []
        ) -> DBusMessage {
            DBusMessage(
                kind: .methodCall,
                flags: flags,
                path: path,
                interface: interface,
                member: member,
                destination: destination,
                body: body
            )
        }

        /// A signal.
        public static func signal(path: DBusObjectPath, interface: String, member: String, body: [DBusValue] = [])
            -> DBusMessage
        {
            DBusMessage(kind: .signal, path: path, interface: interface, member: member, body: body)
        }

        /// The successful reply to a call.
        /// - Parameter body: the reply's values.
        /// - Returns: the reply, addressed to the caller.
        public func reply(_ body: [DBusValue] = []) -> DBusMessage {
            DBusMessage(
                kind: .methodReturn,
                flags: .noReplyExpected,
                replySerial: serial,
                destination: sender,
                body: body
            )
        }

        /// An error reply to a call.
        /// - Parameters:
        ///   - name: the error name.
        ///   - message: its explanation.
        /// - Returns: the reply, addressed to the caller.
        public func errorReply(_ name: String, _ message: String) -> DBusMessage {
            DBusMessage(
                kind: .error,
                flags: .noReplyExpected,
                errorName: name,
                replySerial: serial,
                destination: sender,
                body: [.string(message)]
            )
        }
    }
#endif
