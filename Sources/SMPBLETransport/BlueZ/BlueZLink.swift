// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import SMPBytes
    import SMPDBus
    import SMPLink
    import SMPPOSIX

    /// A `GATTLink` to a device's SMP characteristic through BlueZ: the same transport core as
    /// CoreBluetooth runs over it (fragmentation, reassembly, back-pressure and the window stay in
    /// `GATTTransport`).
    ///
    /// - Writes without response go to the socket of `AcquireWrite` when BlueZ offers and grants
    ///   it, else to `WriteValue` with `type: command`, at most ``maximumWritesInFlight`` calls at a
    ///   time (dbus-daemon refuses a connection's 129th pending call): a write beyond that is
    ///   refused (`false`) until a reply frees a slot, the core's back-pressure.
    /// - Notifications come from the socket of `AcquireNotify`, else from `PropertiesChanged` of
    ///   `Value` after `StartNotify`.
    /// - ``maximumWriteLength`` is the ATT MTU BlueZ reported after connecting (the acquired
    ///   socket's, else the characteristic's `MTU`), less 3; without either, the ATT minimum (20).
    /// - The link is lost when the device's `Connected` turns false, the device or its adapter is
    ///   removed, an acquired socket closes, a write fails, `org.bluez` leaves the bus, or the bus
    ///   connection closes.
    public final class BlueZLink: GATTLink, Sendable {
        /// `WriteValue` calls in flight at most (well below dbus-daemon's 128 per connection, leaving
        /// room for the link's other calls).
        public static let maximumWritesInFlight = 32

        public let maximumWriteLength: Int
        public let events: AsyncStream<GATTLinkEvent>
        /// The device's address.
        public let address: String
        /// Whether writes go through an acquired socket (else `WriteValue`).
        public let writesThroughSocket: Bool
        /// Whether notifications come through an acquired socket (else `PropertiesChanged`).
        public let notificationsThroughSocket: Bool

        private let continuation: AsyncStream<GATTLinkEvent>.Continuation
        private let connection: DBusConnection
        private let observer: BlueZObserver
        private let device: DBusObjectPath
        private let characteristic: DBusObjectPath
        private let writeSocket: BlueZSocket?
        private let notifySocket: BlueZSocket?
        /// Waits for room in `writeSocket`, if there is one.
        private let writeRoom: BlueZWriteRoom?
        private let state = Locked(State())

        private struct State {
            var inFlight = 0
            var slotWaiters: [CheckedContinuation<Void, any Error>] = []
            var endError: SMPTransportError?
        }

        struct Channels {
            var writeSocket: BlueZSocket?
            var notifySocket: BlueZSocket?
            var mtu: Int
        }

        init(
            connection: DBusConnection,
            observer: BlueZObserver,
            device: BlueZDevice,
            characteristic: DBusObjectPath,
            channels: Channels
        ) {
            self.connection = connection
            self.observer = observer
            self.device = device.path
            self.characteristic = characteristic
            address = device.address
            writeSocket = channels.writeSocket
            notifySocket = channels.notifySocket
            writesThroughSocket = channels.writeSocket != nil
            notificationsThroughSocket = channels.notifySocket != nil
            writeRoom = channels.writeSocket.map(BlueZWriteRoom.init)
            maximumWriteLength = max(20, min(512, channels.mtu - 3))
            (events, continuation) = AsyncStream.makeStream(of: GATTLinkEvent.self)
            observer.onSignal { [weak self] message in self?.handle(message) }
            if let notifySocket { startReading(notifySocket, mtu: channels.mtu) }
            Task { [weak self, connection] in
                let reason = await connection.waitUntilClosed()
                self?.end(SMPTransportError(.disconnected, "the system bus connection closed", cause: reason))
            }
        }

        // MARK: - GATTLink

        public func writeWithoutResponse(_ value: [UInt8]) async throws -> Bool {
            if let error = state.withLock({ $0.endError }) { throw error }
            if let writeSocket {
                switch writeSocket.write(value) {
                case .written: return true
                case .full: return false
                case .gone:
                    let error = SMPTransportError(.disconnected, "the acquired write socket closed")
                    end(error)
                    throw error
                }
            }
            let granted = state.withLock { state -> Bool in
                guard state.inFlight < Self.maximumWritesInFlight else { return false }
                state.inFlight += 1
                return true
            }
            guard granted else { return false }
            let call = DBusMessage.methodCall(
                destination: BlueZ.service,
                path: characteristic,
                interface: BlueZ.characteristicInterface,
                member: "WriteValue",
                body: [.bytes(value), .options([("type", .string("command"))])]
            )
            let reply: DBusPendingReply
            do {
                reply = try connection.startCall(call)
            } catch {
                releaseSlot()
                let failure = SMPTransportError(.disconnected, "cannot write to \(address)", cause: error)
                end(failure)
                throw failure
            }
            Task { [weak self] in
                do {
                    _ = try await reply.value()
                    self?.releaseSlot()
                } catch {
                    self?.releaseSlot()
                    self?.writeFailed(error)
                }
            }
            return true
        }

        public func waitUntilReadyForWrite() async throws {
            if let error = state.withLock({ $0.endError }) { throw error }
            if let writeRoom {
                try await writeRoom.wait()
                if let error = state.withLock({ $0.endError }) { throw error }
                return
            }
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if let endError = state.endError { return .failure(endError) }
                    if state.inFlight < Self.maximumWritesInFlight { return .success(()) }
                    state.slotWaiters.append(continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        }

        public func disconnect() async {
            guard state.withLock({ $0.endError == nil }) else { return }
            end(nil)
            if !notificationsThroughSocket {
                _ = try? await connection.call(
                    destination: BlueZ.service,
                    path: characteristic,
                    interface: BlueZ.characteristicInterface,
                    member: "StopNotify",
                    timeout: .seconds(2)
                )
            }
            // The device is left as it was found by other apps: we disconnect our use of it, so it
            // advertises again for the next connection.
            _ = try? await connection.call(
                destination: BlueZ.service,
                path: device,
                interface: BlueZ.deviceInterface,
                member: "Disconnect",
                timeout: .seconds(5)
            )
            connection.close()
        }

        // MARK: - Events

        private func handle(_ message: DBusMessage) {
            let body = message.body
            switch (message.interface, message.member) {
            case (BlueZ.propertiesInterface, "PropertiesChanged"):
                guard body.count >= 2, let interface = body[0].stringValue, let changed = body[1].stringDictionary
                else {
                    return
                }
                if message.path == characteristic, interface == BlueZ.characteristicInterface,
                    !notificationsThroughSocket,
                    let value = changed["Value"]?.bytesValue
                {
                    deliver(value)
                } else if message.path == device, interface == BlueZ.deviceInterface,
                    changed["Connected"]?.boolValue == false
                {
                    end(SMPTransportError(.disconnected, "\(address) disconnected"))
                }
            case (BlueZ.objectManagerInterface, "InterfacesRemoved"):
                guard case .objectPath(let path)? = body.first, device.isDescendant(of: path),
                    body.count > 1,
                    body[1].stringArray?.contains(where: { $0 == BlueZ.deviceInterface || $0 == BlueZ.adapterInterface }
                    )
                        == true
                else { return }
                end(SMPTransportError(.disconnected, "\(address) was removed"))
            case ("org.freedesktop.DBus", "NameOwnerChanged"):
                if body.count == 3, body[0].stringValue == BlueZ.service, body[2].stringValue == "" {
                    end(SMPTransportError(.disconnected, "BlueZ (org.bluez) left the system bus"))
                }
            default:
                break
            }
        }

        private func deliver(_ value: [UInt8]) {
            guard state.withLock({ $0.endError == nil }) else { return }
            continuation.yield(.notification(value))
        }

        private func writeFailed(_ error: any Error) {
            if let remote = error as? DBusRemoteError, BlueZError.meansPairing(remote) {
                end(BlueZError.pairingError(address: address, cause: remote).transportError)
            } else {
                end(SMPTransportError(.disconnected, "a write to \(address) failed", cause: error))
            }
        }

        private func releaseSlot() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                state.inFlight -= 1
                return state.slotWaiters.isEmpty ? nil : state.slotWaiters.removeFirst()
            }
            waiter?.resume()
        }

        /// Ends the link once: every waiter fails, the event stream says why and finishes.
        private func end(_ error: SMPTransportError?) {
            let waiters = state.withLock { state -> [CheckedContinuation<Void, any Error>]? in
                guard state.endError == nil else { return nil }
                state.endError = error ?? SMPTransportError(.disconnected, "the link was closed")
                defer { state.slotWaiters = [] }
                return state.slotWaiters
            }
            guard let waiters else { return }
            let reason = state.withLock { $0.endError } ?? SMPTransportError(.disconnected)
            for waiter in waiters { waiter.resume(throwing: reason) }
            writeSocket?.close()
            notifySocket?.close()
            writeRoom?.socketClosed()
            observer.cancel()
            continuation.yield(.disconnected(error))
            continuation.finish()
            if error != nil { connection.close() }
        }

        // MARK: - Sockets

        private func startReading(_ socket: BlueZSocket, mtu: Int) {
            BlockingReadLoop.start(name: "mcumgr.bluez.notify") { [weak self] in
                switch socket.poll(forWriting: false) {
                case false?:
                    self?.end(SMPTransportError(.disconnected, "the notification socket closed"))
                    return false
                case nil:
                    return self != nil
                case true?:
                    guard let packet = socket.read(maximumCount: max(mtu, 517) + 8) else {
                        self?.end(SMPTransportError(.disconnected, "the notification socket closed"))
                        return false
                    }
                    if !packet.isEmpty { self?.deliver(packet) }
                    return true
                }
            }
        }
    }
#endif
