// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import SMPBytes
    import SMPPOSIX

    /// Exporting objects: method dispatch, `org.freedesktop.DBus.Properties`, `ObjectManager`,
    /// `Introspectable` and `Peer`, as BlueZ needs them from a GATT application or advertisement.
    extension DBusConnection {
        static let propertiesInterface = "org.freedesktop.DBus.Properties"
        static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
        static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
        static let peerInterface = "org.freedesktop.DBus.Peer"

        /// Exports an object (replacing one at the same path). Below an object manager, the manager
        /// announces it with `InterfacesAdded`.
        /// - Parameter object: the object.
        public func export(_ object: DBusExportedObject) {
            let manager = state.withLock { state -> DBusObjectPath? in
                state.objects[object.path] = object
                return state.objectManagers.first { object.path != $0 && object.path.isDescendant(of: $0) }
            }
            if let manager {
                let interfaces = DBusValue.dictionary(
                    key: .string,
                    value: .dictionary(key: .string, value: .variant),
                    object.interfaces.map { DBusDictionaryEntry(key: .string($0.name), value: $0.currentProperties) }
                )
                _ = try? send(
                    .signal(
                        path: manager,
                        interface: Self.objectManagerInterface,
                        member: "InterfacesAdded",
                        body: [.objectPath(object.path), interfaces]
                    )
                )
            }
        }

        /// Removes an exported object; its manager announces `InterfacesRemoved`.
        /// - Parameter path: the object's path.
        public func unexport(_ path: DBusObjectPath) {
            let (removed, manager) = state.withLock { state -> (DBusExportedObject?, DBusObjectPath?) in
                (
                    state.objects.removeValue(forKey: path),
                    state.objectManagers.first { path != $0 && path.isDescendant(of: $0) }
                )
            }
            guard let removed, let manager else { return }
            _ = try? send(
                .signal(
                    path: manager,
                    interface: Self.objectManagerInterface,
                    member: "InterfacesRemoved",
                    body: [.objectPath(path), .strings(removed.interfaces.map(\.name))]
                )
            )
        }

        /// Makes `path` an `org.freedesktop.DBus.ObjectManager` for the exported objects below it.
        /// - Parameter path: the manager's path (it need not be an exported object itself).
        public func addObjectManager(at path: DBusObjectPath) {
            state.withLock { _ = $0.objectManagers.insert(path) }
        }

        /// Emits `PropertiesChanged` for properties of an exported object.
        /// - Parameters:
        ///   - path: the object.
        ///   - interface: the interface the properties belong to.
        ///   - changed: new values.
        ///   - invalidated: names whose values changed without being sent.
        /// - Throws: ``DBusError`` when the connection is closed.
        public func emitPropertiesChanged(
            path: DBusObjectPath,
            interface: String,
            changed: [(String, DBusValue)],
            invalidated: [String] = []
        ) throws(DBusError) {
            try send(
                .signal(
                    path: path,
                    interface: Self.propertiesInterface,
                    member: "PropertiesChanged",
                    body: [.string(interface), .options(changed), .strings(invalidated)]
                )
            )
        }

        // MARK: - Dispatch

        func handleCall(_ received: DBusReceivedMessage) async {
            let call = received.message
            let reply: DBusMessage
            var descriptors: [Int32] = []
            do {
                let answer = try await answer(DBusMethodCall(message: call, descriptors: received.descriptors))
                reply = call.reply(answer.values)
                descriptors = answer.descriptors
            } catch let error as DBusRemoteError {
                reply = call.errorReply(error.name, error.message)
            } catch {
                reply = call.errorReply("org.freedesktop.DBus.Error.Failed", "\(error)")
            }
            defer { for descriptor in descriptors { _ = systemClose(descriptor) } }
            guard !call.flags.contains(.noReplyExpected) else { return }
            var outgoing = reply
            outgoing.flags = .noReplyExpected
            do {
                try send(outgoing, descriptors: descriptors)
            } catch {
                // A reply that cannot be encoded (a handler's values not matching its signature) is
                // our bug; the caller gets an error rather than a timeout.
                _ = try? send(call.errorReply("org.freedesktop.DBus.Error.Failed", "\(error)"))
            }
        }

        private func answer(_ call: DBusMethodCall) async throws -> DBusMethodReply {
            let message = call.message
            guard let path = message.path, let member = message.member else {
                throw DBusRemoteError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no path or member")
            }
            let (object, isManager, children) = state.withLock {
                ($0.objects[path], $0.objectManagers.contains(path), Self.childNames(of: path, in: $0))
            }
            switch (message.interface, member) {
            case (Self.peerInterface, "Ping"), (nil, "Ping"):
                return DBusMethodReply()
            case (Self.introspectableInterface, "Introspect"), (nil, "Introspect"):
                return DBusMethodReply([
                    .string(DBusIntrospection.xml(object: object, isManager: isManager, children: children))
                ])
            case (Self.objectManagerInterface, "GetManagedObjects") where isManager:
                return DBusMethodReply([managedObjects(below: path)])
            case (Self.propertiesInterface, _):
                guard let object else { throw unknownObject(path) }
                return try properties(call, member: member, object: object)
            default:
                guard let object else { throw unknownObject(path) }
                return try await invoke(call, member: member, object: object)
            }
        }

        private func invoke(_ call: DBusMethodCall, member: String, object: DBusExportedObject) async throws
            -> DBusMethodReply
        {
            let candidates = object.interfaces.filter {
                call.message.interface == nil || $0.name == call.message.interface
            }
            guard !candidates.isEmpty else {
                throw DBusRemoteError(
                    name: "org.freedesktop.DBus.Error.UnknownInterface",
                    message: "\(object.path) has no interface \(call.message.interface ?? "")"
                )
            }
            guard let method = candidates.lazy.compactMap({ $0.methods[member] }).first else {
                throw DBusRemoteError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no method \(member)")
            }
            guard call.message.signature == method.input else {
                throw DBusRemoteError(
                    name: "org.freedesktop.DBus.Error.InvalidArgs",
                    message: "\(member) takes '\(method.input)', got '\(call.message.signature)'"
                )
            }
            let reply = try await method.handler(call)
            guard DBusSignature(reply.values.map(\.type)) == method.output else {
                for descriptor in reply.descriptors { _ = systemClose(descriptor) }
                throw DBusRemoteError(name: "org.freedesktop.DBus.Error.Failed", message: "\(member) answered wrongly")
            }
            return reply
        }

        private func properties(_ call: DBusMethodCall, member: String, object: DBusExportedObject) throws
            -> DBusMethodReply
        {
            let arguments = call.arguments
            let interfaceName = arguments.first?.stringValue ?? ""
            let interface = object.interface(interfaceName)
            switch (member, arguments.count) {
            case ("GetAll", 1) where call.message.signature == "s":
                return DBusMethodReply([interface?.currentProperties ?? .options([])])
            case ("Get", 2) where call.message.signature == "ss":
                guard let name = arguments[1].stringValue, let property = interface?.properties[name] else {
                    throw unknownProperty(arguments[1].stringValue ?? "", interfaceName)
                }
                return DBusMethodReply([.variant(property.get())])
            case ("Set", 3) where call.message.signature == "ssv":
                guard let name = arguments[1].stringValue, let property = interface?.properties[name] else {
                    throw unknownProperty(arguments[1].stringValue ?? "", interfaceName)
                }
                guard let set = property.set else {
                    throw DBusRemoteError(
                        name: "org.freedesktop.DBus.Error.PropertyReadOnly",
                        message: "\(name) is read-only"
                    )
                }
                guard case .variant(let value) = arguments[2], value.type == property.type else {
                    throw DBusRemoteError(
                        name: "org.freedesktop.DBus.Error.InvalidArgs",
                        message: "\(name) is '\(property.type)'"
                    )
                }
                try set(value)
                return DBusMethodReply()
            default:
                throw DBusRemoteError(name: "org.freedesktop.DBus.Error.InvalidArgs", message: "Properties.\(member)")
            }
        }

        private func managedObjects(below root: DBusObjectPath) -> DBusValue {
            let below = state.withLock {
                $0.objects.values.filter { $0.path != root && $0.path.isDescendant(of: root) }
            }
            return .dictionary(
                key: .objectPath,
                value: .dictionary(key: .string, value: .dictionary(key: .string, value: .variant)),
                below.sorted { $0.path < $1.path }.map { object in
                    DBusDictionaryEntry(
                        key: .objectPath(object.path),
                        value: .dictionary(
                            key: .string,
                            value: .dictionary(key: .string, value: .variant),
                            object.interfaces.map {
                                DBusDictionaryEntry(key: .string($0.name), value: $0.currentProperties)
                            }
                        )
                    )
                }
            )
        }

        /// Names of the nodes directly below `path` that lead to exported objects (for introspection).
        private static func childNames(of path: DBusObjectPath, in state: State) -> [String] {
            let prefix = path.rawValue == "/" ? "/" : path.rawValue + "/"
            var names = Set<String>()
            for candidate in state.objects.keys where candidate.rawValue.hasPrefix(prefix) && candidate != path {
                if let first = candidate.rawValue.dropFirst(prefix.count).split(separator: "/").first {
                    names.insert(String(first))
                }
            }
            for candidate in state.objectManagers where candidate.rawValue.hasPrefix(prefix) && candidate != path {
                if let first = candidate.rawValue.dropFirst(prefix.count).split(separator: "/").first {
                    names.insert(String(first))
                }
            }
            return names.sorted()
        }

        private func unknownObject(_ path: DBusObjectPath) -> DBusRemoteError {
            DBusRemoteError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no object at \(path)")
        }

        private func unknownProperty(_ name: String, _ interface: String) -> DBusRemoteError {
            DBusRemoteError(
                name: "org.freedesktop.DBus.Error.UnknownProperty",
                message: "no property \(interface).\(name)"
            )
        }
    }
#endif
