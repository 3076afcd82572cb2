// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPDBus
    import SMPLink
    import SMPPOSIX

    /// Sets up the two directions of a link to the SMP characteristic: acquired sockets where BlueZ
    /// offers and grants them, else `StartNotify` (notifications as `PropertiesChanged`) and
    /// `WriteValue`; and the ATT MTU BlueZ reports.
    enum BlueZSubscription {
        static func open(
            _ characteristic: BlueZCharacteristic,
            device: BlueZDevice,
            bus: DBusConnection,
            acquire: Bool
        ) async throws -> BlueZLink.Channels {
            let flags = Set(characteristic.flags)
            guard flags.contains("write-without-response"), flags.contains("notify") || flags.contains("indicate")
            else {
                throw BlueZError(
                    .noSMPService,
                    "the SMP characteristic of \(device.address) has flags \(characteristic.flags.joined(separator: ", ")); "
                        + "SMP needs write-without-response and notify"
                )
            }
            var notify: (BlueZSocket, Int)?
            if acquire && characteristic.offersAcquireNotify {
                notify = try await acquireSocket("AcquireNotify", characteristic, device: device, bus: bus)
            }
            if notify == nil {
                do {
                    _ = try await bus.call(
                        destination: BlueZ.service,
                        path: characteristic.path,
                        interface: BlueZ.characteristicInterface,
                        member: "StartNotify"
                    )
                } catch {
                    throw BlueZError.from(
                        error,
                        doing: "cannot subscribe to the SMP notifications of \(device.address)",
                        address: device.address
                    )
                }
            }
            var write: (BlueZSocket, Int)?
            if acquire && characteristic.offersAcquireWrite {
                write = try await acquireSocket("AcquireWrite", characteristic, device: device, bus: bus)
            }
            // The write length: the acquired write socket's MTU, else what BlueZ reports now.
            var mtu = write?.1
            if mtu == nil {
                mtu = try? await BlueZ.property(bus, characteristic.path, BlueZ.characteristicInterface, "MTU")?
                    .intValue
            }
            return BlueZLink.Channels(
                writeSocket: write?.0,
                notifySocket: notify?.0,
                mtu: mtu ?? characteristic.mtu ?? notify?.1 ?? 23
            )
        }

        /// `AcquireWrite` or `AcquireNotify`: a socket and the link's MTU, or `nil` when BlueZ (or the
        /// peripheral behind it) declines, so the caller uses the D-Bus path. A refusal that asks for
        /// pairing is an error.
        private static func acquireSocket(
            _ method: String,
            _ characteristic: BlueZCharacteristic,
            device: BlueZDevice,
            bus: DBusConnection
        ) async throws -> (BlueZSocket, Int)? {
            let reply: DBusReceivedMessage
            do {
                reply = try await bus.call(
                    destination: BlueZ.service,
                    path: characteristic.path,
                    interface: BlueZ.characteristicInterface,
                    member: method,
                    body: [.options([])]
                )
            } catch let error as DBusRemoteError {
                if BlueZError.meansPairing(error) {
                    throw BlueZError.pairingError(address: device.address, cause: error)
                }
                return nil
            }
            guard reply.message.body.count == 2, case .unixFD(let index) = reply.message.body[0],
                let mtu = reply.message.body[1].intValue, let descriptor = reply.descriptors.take(Int(index))
            else {
                throw BlueZError(
                    .protocolViolation,
                    "\(method) answered '\(reply.message.signature)', not (hq) with a descriptor"
                )
            }
            guard (23...517).contains(mtu) else {
                _ = systemClose(descriptor)
                throw BlueZError(.protocolViolation, "\(method) reported an ATT MTU of \(mtu), outside 23...517")
            }
            return (BlueZSocket(descriptor), mtu)
        }
    }

    /// Pairing through BlueZ with an agent of our own (NoInputNoOutput: Just Works, as a device
    /// without a display or keyboard pairs).
    enum BlueZPairing {
        static let agentPath: DBusObjectPath = "/org/mcumgr/agent"

        static func pair(_ device: BlueZDevice, bus: DBusConnection, observer: BlueZObserver, timeout: Duration)
            async throws
        {
            bus.export(agent())
            do {
                _ = try await bus.call(
                    destination: BlueZ.service,
                    path: "/org/bluez",
                    interface: BlueZ.agentManagerInterface,
                    member: "RegisterAgent",
                    body: [.objectPath(agentPath), .string("NoInputNoOutput")]
                )
            } catch let error as DBusRemoteError where error.name == "org.bluez.Error.AlreadyExists" {
                // Registered already on this connection.
            }
            do {
                _ = try await bus.call(
                    destination: BlueZ.service,
                    path: device.path,
                    interface: BlueZ.deviceInterface,
                    member: "Pair",
                    timeout: timeout
                )
            } catch let error as DBusRemoteError where error.name == "org.bluez.Error.AlreadyExists" {
                // Paired meanwhile.
            } catch {
                throw BlueZError(
                    .pairingRequired,
                    "pairing with \(device.address) failed; try 'bluetoothctl pair \(device.address)'",
                    cause: error
                )
            }
            let paired = await observer.wait(timeout: timeout) { tree in
                tree.device(at: device.path).flatMap { $0.paired ? $0 : nil }
            }
            guard paired != nil else {
                throw BlueZError(
                    .pairingRequired,
                    "\(device.address) did not report Paired within \(timeout.components.seconds) s"
                )
            }
        }

        /// `org.bluez.Agent1` accepting Just Works confirmations and authorizations, refusing
        /// anything that needs a PIN or passkey (we can show or type none).
        static func agent() -> DBusExportedObject {
            let rejected = DBusRemoteError(
                name: "org.bluez.Error.Rejected",
                message: "mcumgr pairs with Just Works only"
            )
            let accept = DBusMethod(input: "o") { _ in DBusMethodReply() }
            return DBusExportedObject(
                path: agentPath,
                interfaces: [
                    DBusInterface(
                        name: "org.bluez.Agent1",
                        methods: [
                            "Release": DBusMethod { _ in DBusMethodReply() },
                            "Cancel": DBusMethod { _ in DBusMethodReply() },
                            "RequestAuthorization": accept,
                            "RequestConfirmation": DBusMethod(input: "ou") { _ in DBusMethodReply() },
                            "AuthorizeService": DBusMethod(input: "os") { _ in DBusMethodReply() },
                            "RequestPinCode": DBusMethod(input: "o", output: "s") { _ in throw rejected },
                            "RequestPasskey": DBusMethod(input: "o", output: "u") { _ in throw rejected },
                            "DisplayPinCode": DBusMethod(input: "os") { _ in throw rejected },
                            "DisplayPasskey": DBusMethod(input: "ouq") { _ in DBusMethodReply() },
                        ]
                    )
                ]
            )
        }
    }
#endif
