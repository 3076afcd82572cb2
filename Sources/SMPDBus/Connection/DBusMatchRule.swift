// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation

    /// A match rule for signals (`AddMatch`): the bus forwards the signals it describes, and the
    /// connection hands each subscriber the ones its rule matches.
    public struct DBusMatchRule: Sendable, Hashable, CustomStringConvertible {
        /// The sender's bus name (filtered by the bus only: a well-known name owns a unique name).
        public var sender: String?
        /// The interface.
        public var interface: String?
        /// The member.
        public var member: String?
        /// The exact object path.
        public var path: DBusObjectPath?
        /// The path or anything below it.
        public var pathNamespace: DBusObjectPath?
        /// The first argument, when it is a string.
        public var arg0: String?

        /// Creates a rule for signals.
        public init(
            sender: String? = nil,
            interface: String? = nil,
            member: String? = nil,
            path: DBusObjectPath? = nil,
            pathNamespace: DBusObjectPath? = nil,
            arg0: String? = nil
        ) {
            self.sender = sender
            self.interface = interface
            self.member = member
            self.path = path
            self.pathNamespace = pathNamespace
            self.arg0 = arg0
        }

        /// The rule as `AddMatch` takes it: `type='signal',interface='…',…`.
        public var description: String {
            var parts = ["type='signal'"]
            func add(_ key: String, _ value: String?) {
                // Rule values are quoted; a quote inside is written '\'' as the specification says.
                if let value { parts.append("\(key)='" + value.replacingOccurrences(of: "'", with: "'\\''") + "'") }
            }
            add("sender", sender)
            add("interface", interface)
            add("member", member)
            add("path", path?.rawValue)
            add("path_namespace", pathNamespace?.rawValue)
            add("arg0", arg0)
            return parts.joined(separator: ",")
        }

        /// Whether a signal matches everything but the sender.
        /// - Parameter message: the message.
        /// - Returns: `true` for a matching signal.
        public func matches(_ message: DBusMessage) -> Bool {
            guard message.kind == .signal else { return false }
            if let interface, message.interface != interface { return false }
            if let member, message.member != member { return false }
            if let path, message.path != path { return false }
            if let pathNamespace, !(message.path?.isDescendant(of: pathNamespace) ?? false) { return false }
            if let arg0, message.body.first?.stringValue != arg0 { return false }
            return true
        }
    }
#endif
