// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPBytes

    /// The header fields, by code.
    enum DBusHeaderField: UInt8 {
        case path = 1
        case interface, member, errorName, replySerial, destination, sender, signature, unixFDs
    }

    extension DBusMessage {
        private static let fieldArrayType = DBusType.array(.structure([.byte, .variant]))

        /// The message in the wire format, header fields in the order of their codes.
        /// - Parameter endianness: the byte order (little by default, as every common bus uses).
        /// - Returns: the bytes.
        /// - Throws: ``DBusError`` `.invalidName` for a missing or invalid required field, a zero
        ///   serial, `.typeMismatch` or `.limitExceeded` from the body.
        public func encoded(endianness: Endianness = .little) throws(DBusError) -> [UInt8] {
            try validateFields()
            var body = DBusMarshaller(endianness: endianness)
            // Parsed again so that a body whose types exceed the signature limits is refused.
            let signature = try DBusSignature(self.body.map(\.type.description).joined())
            try body.write(self.body, signature: signature)
            guard body.unixFDsNeeded <= unixFDCount || unixFDCount == 0 else {
                throw DBusError(.typeMismatch, "the body names descriptor \(body.unixFDsNeeded - 1) of \(unixFDCount)")
            }
            let fdCount = max(unixFDCount, body.unixFDsNeeded)
            var message = DBusMarshaller(endianness: endianness)
            for byte in [
                endianness == .little ? UInt8(ascii: "l") : UInt8(ascii: "B"), kind.rawValue, flags.rawValue, 1,
            ] {
                try message.write(.byte(byte), as: .byte)
            }
            try message.write(.uint32(UInt32(body.bytes.count)), as: .uint32)
            try message.write(.uint32(serial), as: .uint32)
            try message.write(
                .array(.structure([.byte, .variant]), headerFields(signature, fdCount)),
                as: Self.fieldArrayType
            )
            message.pad(to: 8)
            message.append(body.bytes)
            guard message.bytes.count <= Self.maximumLength else {
                throw DBusError(
                    .limitExceeded,
                    "a \(message.bytes.count)-byte message, more than \(Self.maximumLength)"
                )
            }
            return message.bytes
        }

        private func headerFields(_ signature: DBusSignature, _ fdCount: UInt32) -> [DBusValue] {
            var fields: [(DBusHeaderField, DBusValue)] = []
            if let path { fields.append((.path, .objectPath(path))) }
            if let interface { fields.append((.interface, .string(interface))) }
            if let member { fields.append((.member, .string(member))) }
            if let errorName { fields.append((.errorName, .string(errorName))) }
            if let replySerial { fields.append((.replySerial, .uint32(replySerial))) }
            if let destination { fields.append((.destination, .string(destination))) }
            if let sender { fields.append((.sender, .string(sender))) }
            if !signature.types.isEmpty { fields.append((.signature, .signature(signature))) }
            if fdCount > 0 { fields.append((.unixFDs, .uint32(fdCount))) }
            return fields.map { .structure([.byte($0.0.rawValue), .variant($0.1)]) }
        }

        /// Checks the fields a message of its kind needs and that every name is valid.
        func validateFields() throws(DBusError) {
            func invalid(_ what: String) -> DBusError { DBusError(.invalidName, what) }
            guard serial != 0 else { throw invalid("the serial is 0") }
            switch kind {
            case .methodCall:
                guard path != nil, member != nil else { throw invalid("a method call needs a path and a member") }
            case .signal:
                guard path != nil, interface != nil, member != nil else {
                    throw invalid("a signal needs a path, an interface and a member")
                }
            case .error:
                guard errorName != nil, replySerial != nil else {
                    throw invalid("an error needs a name and a reply serial")
                }
            case .methodReturn:
                guard replySerial != nil else { throw invalid("a method return needs a reply serial") }
            }
            if let interface, !DBusNames.isInterfaceName(interface) {
                throw invalid("'\(interface)' is not an interface name")
            }
            if let member, !DBusNames.isMemberName(member) { throw invalid("'\(member)' is not a member name") }
            if let errorName, !DBusNames.isInterfaceName(errorName) {
                throw invalid("'\(errorName)' is not an error name")
            }
            if let destination, !DBusNames.isBusName(destination) {
                throw invalid("'\(destination)' is not a bus name")
            }
            if let sender, !DBusNames.isBusName(sender) { throw invalid("'\(sender)' is not a bus name") }
            if replySerial == 0 { throw invalid("the reply serial is 0") }
            if interface == "org.freedesktop.DBus.Local" { throw invalid("org.freedesktop.DBus.Local is reserved") }
        }
    }
#endif
