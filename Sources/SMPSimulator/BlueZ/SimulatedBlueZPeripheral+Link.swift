// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import Logging
    import SMPBytes
    import SMPCore
    import SMPDBus
    import SMPLink
    import SMPPOSIX

    /// What the peripheral knows about its one connection, behind a lock (property getters of the
    /// exported objects read it synchronously).
    struct BlueZPeripheralState: Sendable {
        var bus: DBusConnection?
        /// Whether ``SimulatedBlueZPeripheral/stop()`` closed the bus (not the bus going away).
        var stopped = false
        var adapter: DBusObjectPath?
        /// The connection's number; a drop starts the next one.
        var link = 0
        /// Whether the current connection has been counted (something arrived on it).
        var linkActive = false
        var central: DBusObjectPath?
        var mtu: Int?
        var notifying = false
        var writeSocket: SeqPacketEnd?
        var notifySocket: SeqPacketEnd?
        var connections = 0
        var notifications = 0
        var drops = 0
    }

    extension SimulatedBlueZPeripheral {
        /// Notes what a call from BlueZ says about the connection (the central, the MTU) and counts a
        /// new connection; returns the connection's number.
        func touch(options: [String: DBusValue]) -> Int {
            state.withLock { values in
                if !values.linkActive {
                    values.linkActive = true
                    values.connections += 1
                }
                if let mtu = options["mtu"]?.intValue, (23...517).contains(mtu) { values.mtu = mtu }
                if let central = options["device"]?.stringValue, let path = try? DBusObjectPath(central) {
                    values.central = path
                }
                return values.link
            }
        }

        /// The ATT MTU of the connection: what BlueZ passed, capped by ours; ours when it passed none.
        var currentMTU: Int {
            min(options.maximumMTU, state.withLock { $0.mtu } ?? options.maximumMTU)
        }

        /// Sends one response as notifications of at most MTU − 3 bytes: on the acquired socket, or
        /// as `PropertiesChanged` of `Value` while notifications are on. Frames are never interleaved.
        func notify(_ frame: [UInt8], link: Int) {
            sendOrder.withLock { _ in notifyInOrder(frame, link: link) }
        }

        private func notifyInOrder(_ frame: [UInt8], link: Int) {
            let (current, bus, socket, notifying) = state.withLock { ($0.link, $0.bus, $0.notifySocket, $0.notifying) }
            guard current == link else { return }
            // An attribute value is at most 512 bytes (Core spec, Vol 3 Part F 3.2.9), even at MTU 517.
            let length = min(512, currentMTU - SMPGATT.attHeaderSize)
            for fragment in BLEFragmentation.fragments(of: frame, maximumWriteLength: length) {
                let value = Array(fragment)
                if let socket {
                    guard socket.send(value) else {
                        drop(reason: "the notification socket closed", disconnectCentral: false, link: link)
                        return
                    }
                } else if notifying, let bus {
                    do {
                        try bus.emitPropertiesChanged(
                            path: Self.smpCharacteristic,
                            interface: "org.bluez.GattCharacteristic1",
                            changed: [("Value", .bytes(value))]
                        )
                    } catch {
                        logger.debug("notification not sent: \(error)")
                        return
                    }
                } else {
                    logger.debug("a response while the central is not subscribed: dropped")
                    return
                }
                state.withLock { $0.notifications += 1 }
            }
        }

        /// Ends the current connection as a device whose link drops: notifications off, sockets
        /// closed, the reassembly abandoned, and (for a reset or a link fault) BlueZ asked to
        /// disconnect the central.
        /// - Parameter link: the connection meant; a later one is left alone.
        func drop(reason: String, disconnectCentral: Bool, link: Int? = nil) {
            let dropped = state.withLock { values -> (DBusConnection?, DBusObjectPath?, Bool)? in
                guard link == nil || link == values.link else { return nil }
                let wasNotifying = values.notifying
                values.writeSocket?.close()
                values.notifySocket?.close()
                values.writeSocket = nil
                values.notifySocket = nil
                values.notifying = false
                values.link += 1
                if values.linkActive { values.drops += 1 }
                values.linkActive = false
                values.mtu = nil
                defer { values.central = nil }
                return (values.bus, values.central, wasNotifying)
            }
            guard let (bus, central, wasNotifying) = dropped, let bus else { return }
            logger.debug("link dropped: \(reason)")
            if wasNotifying {
                try? bus.emitPropertiesChanged(
                    path: Self.smpCharacteristic,
                    interface: "org.bluez.GattCharacteristic1",
                    changed: [("Notifying", .boolean(false))]
                )
            }
            if disconnectCentral, let central {
                Task {
                    _ = try? await bus.call(
                        destination: "org.bluez",
                        path: central,
                        interface: "org.bluez.Device1",
                        member: "Disconnect",
                        timeout: .seconds(5)
                    )
                }
            }
        }

        /// A socket pair for `AcquireWrite`: packets read from our end are writes.
        func acquireWrite(options: [String: DBusValue]) throws -> DBusMethodReply {
            let link = touch(options: options)
            guard let (ours, theirs) = SeqPacketEnd.make() else {
                throw DBusRemoteError(name: "org.bluez.Error.Failed", message: "no socket pair")
            }
            state.withLock { values in
                values.writeSocket?.close()
                values.writeSocket = ours
            }
            BlockingReadLoop.start(name: "mcumgr.simulator.bluez.write") { [weak self] in
                guard let packet = ours.receive(maximumCount: 1024) else {
                    ours.close()
                    return false
                }
                if !packet.isEmpty { self?.received(packet, link: link) }
                return true
            }
            return DBusMethodReply([.unixFD(0), .uint16(UInt16(currentMTU))], descriptors: [theirs])
        }

        /// A socket pair for `AcquireNotify`: notifications are written to our end.
        func acquireNotify(options: [String: DBusValue]) throws -> DBusMethodReply {
            _ = touch(options: options)
            guard let (ours, theirs) = SeqPacketEnd.make() else {
                throw DBusRemoteError(name: "org.bluez.Error.Failed", message: "no socket pair")
            }
            state.withLock { values in
                values.notifySocket?.close()
                values.notifySocket = ours
            }
            return DBusMethodReply([.unixFD(0), .uint16(UInt16(currentMTU))], descriptors: [theirs])
        }

        /// `StartNotify` / `StopNotify`.
        func setNotifying(_ on: Bool) {
            if on { _ = touch(options: [:]) }
            let (bus, changed) = state.withLock { values -> (DBusConnection?, Bool) in
                defer { values.notifying = on }
                return (values.bus, values.notifying != on)
            }
            guard changed, let bus else { return }
            try? bus.emitPropertiesChanged(
                path: Self.smpCharacteristic,
                interface: "org.bluez.GattCharacteristic1",
                changed: [("Notifying", .boolean(on))]
            )
        }
    }
#endif
