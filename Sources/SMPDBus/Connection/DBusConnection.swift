// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import SMPBytes
    import SMPPOSIX

    #if canImport(Glibc)
        import Glibc
    #elseif canImport(Musl)
        import Musl
    #elseif canImport(Darwin)
        import Darwin
    #endif

    /// A connection to a message bus: method calls with replies matched by serial, signals, and
    /// objects we export.
    ///
    /// A thread of its own reads the socket, so nothing blocks Swift's cooperative pool. Replies go
    /// straight to the call waiting for them; signals and incoming method calls are handled in
    /// arrival order by one task, so a method handler may itself make calls and await their replies.
    /// At most ``maximumPendingCalls`` calls wait for replies at once (dbus-daemon refuses more
    /// than 128 per connection); further calls wait for a slot.
    public final class DBusConnection: Sendable {
        /// Calls in flight at most; the rest wait. Below dbus-daemon's 128 per connection.
        public static let maximumPendingCalls = 64
        /// The default time a call waits for its reply (libdbus's default).
        public static let defaultTimeout: Duration = .seconds(25)

        /// Whether the bus agreed to pass file descriptors.
        public let unixFDsEnabled: Bool

        let socket: DBusSocket

        struct State {
            var nextSerial: UInt32 = 1
            var pending: [UInt32: PendingCall] = [:]
            var subscribers: [Int: (DBusMatchRule?, AsyncStream<DBusReceivedMessage>.Continuation)] = [:]
            var nextSubscriber = 0
            var closeReason: DBusError?
            var closeWaiters: [CheckedContinuation<DBusError, Never>] = []
            var objects: [DBusObjectPath: DBusExportedObject] = [:]
            var objectManagers: Set<DBusObjectPath> = []
        }

        let state = Locked(State())
        /// Held while a message is numbered and written, so messages leave in the order numbered.
        private let sendOrder = Locked(())

        private let slots = DBusSlots(limit: DBusConnection.maximumPendingCalls)
        private let inbox: AsyncStream<DBusReceivedMessage>.Continuation

        private init(socket: DBusSocket, unixFDs: Bool, inbox: AsyncStream<DBusReceivedMessage>.Continuation) {
            self.socket = socket
            unixFDsEnabled = unixFDs
            self.inbox = inbox
        }

        /// Connects to a bus, authenticates (`EXTERNAL`, asking for descriptor passing) and says
        /// `Hello`.
        /// - Parameters:
        ///   - address: the bus; by default the system bus (`DBUS_SYSTEM_BUS_ADDRESS`).
        ///   - timeout: how long the handshake may take.
        /// - Returns: the connection.
        /// - Throws: ``DBusError`` `.connectionFailed` (no bus there, permission denied, the bus
        ///   closed the connection before answering `Hello`), `.authenticationFailed`, `.timeout`.
        public static func connect(to address: DBusAddress? = nil, timeout: Duration = .seconds(10)) async throws
            -> DBusConnection
        {
            let address = try address ?? DBusAddress.systemBus()
            let socket = try DBusSocket.connect(to: address)
            let handshake = try await DBusHandshake.run(on: socket, timeout: timeout)
            let (inboxStream, inbox) = AsyncStream.makeStream(of: DBusReceivedMessage.self)
            let connection = DBusConnection(socket: socket, unixFDs: handshake.unixFDs, inbox: inbox)
            connection.startReading(leftover: handshake.leftover)
            connection.startDispatching(inboxStream)
            do {
                let reply = try await connection.call(
                    destination: "org.freedesktop.DBus",
                    path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus",
                    member: "Hello",
                    timeout: timeout
                )
                guard let name = reply.message.body.first?.stringValue else {
                    throw DBusError(.malformedMessage, "Hello answered without a name")
                }
                connection.uniqueNameStorage.withLock { $0 = name }
                return connection
            } catch let error as DBusError where error.code == .disconnected {
                connection.close()
                throw DBusError(
                    .connectionFailed,
                    "the bus closed the connection before answering Hello (dbus-daemon closes a connection "
                        + "that has not authenticated and said Hello within its auth_timeout)",
                    cause: error
                )
            } catch {
                connection.close()
                throw error
            }
        }

        private let uniqueNameStorage = Locked("")

        /// Our unique name on the bus, e.g. `:1.42` (set once `Hello` has answered).
        public var uniqueName: String { uniqueNameStorage.withLock { $0 } }

        // MARK: - Sending

        /// Sends a message that expects no reply (a signal, a reply, a call flagged so).
        /// - Parameters:
        ///   - message: the message; its serial is assigned here.
        ///   - descriptors: descriptors to pass with it (still owned by the caller).
        /// - Returns: the serial given to the message.
        /// - Throws: ``DBusError`` `.disconnected`, or what encoding the message throws.
        @discardableResult
        public func send(_ message: DBusMessage, descriptors: [Int32] = []) throws(DBusError) -> UInt32 {
            if let reason = state.withLock({ $0.closeReason }) { throw reason }
            guard descriptors.isEmpty || unixFDsEnabled else {
                throw DBusError(.unsupported, "the bus does not pass file descriptors on this connection")
            }
            return try sendOrder.withLock { _ throws(DBusError) in
                var message = message
                message.serial = state.withLock { state in
                    defer { state.nextSerial = state.nextSerial == UInt32.max ? 1 : state.nextSerial + 1 }
                    return state.nextSerial
                }
                if !descriptors.isEmpty { message.unixFDCount = UInt32(descriptors.count) }
                try socket.send(try message.encoded(), descriptors: descriptors)
                return message.serial
            }
        }

        /// Calls a method and waits for its reply.
        /// - Parameters:
        ///   - message: a method call.
        ///   - descriptors: descriptors to pass with it.
        ///   - timeout: how long to wait for the reply.
        /// - Returns: the reply and its descriptors.
        /// - Throws: ``DBusRemoteError`` for an error reply, ``DBusError`` `.timeout`,
        ///   `.disconnected`; `CancellationError` when the task is cancelled.
        public func call(_ message: DBusMessage, descriptors: [Int32] = [], timeout: Duration = defaultTimeout)
            async throws -> DBusReceivedMessage
        {
            try await slots.acquire()
            defer { slots.release() }
            let serialBox = Locked("")
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<DBusReceivedMessage, any Error>) in
                    do {
                        if Task.isCancelled { throw CancellationError() }
                        let serial = try begin(message, descriptors: descriptors) { continuation.resume(with: $0) }
                        serialBox.withLock { $0 = String(serial) }
                        scheduleTimeout(serial: serial, after: timeout, member: message.member ?? "?")
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            } onCancel: {
                if let serial = UInt32(serialBox.withLock { $0 }) {
                    fail(serial: serial, with: CancellationError())
                }
            }
        }

        /// Numbers a call, registers its completion before the bytes leave (so a fast reply finds
        /// it) and sends it. `sendOrder` keeps numbering and sending in one order; `state` is held only
        /// briefly, so the reader thread never waits for a send.
        private func begin(
            _ message: DBusMessage,
            descriptors: [Int32],
            complete: @escaping @Sendable (Result<DBusReceivedMessage, any Error>) -> Void
        ) throws(DBusError) -> UInt32 {
            guard descriptors.isEmpty || unixFDsEnabled else {
                throw DBusError(.unsupported, "the bus does not pass file descriptors on this connection")
            }
            return try sendOrder.withLock { _ throws(DBusError) in
                var outgoing = message
                if !descriptors.isEmpty { outgoing.unixFDCount = UInt32(descriptors.count) }
                outgoing.serial = try state.withLock { state throws(DBusError) in
                    if let reason = state.closeReason { throw reason }
                    let serial = state.nextSerial
                    state.nextSerial = serial == UInt32.max ? 1 : serial + 1
                    state.pending[serial] = PendingCall(complete: complete)
                    return serial
                }
                do throws(DBusError) {
                    try socket.send(try outgoing.encoded(), descriptors: descriptors)
                } catch {
                    // The reader may have closed the connection meanwhile and completed the call with
                    // the reason: then the call has its outcome, and throwing as well would complete it
                    // twice (a crash, seen when a bus closed the connection during `Hello`).
                    let stillPending = state.withLock { $0.pending.removeValue(forKey: outgoing.serial) != nil }
                    guard stillPending else { return outgoing.serial }
                    throw error
                }
                return outgoing.serial
            }
        }

        /// Calls a method by its parts.
        /// - Returns: the reply.
        /// - Throws: as ``call(_:descriptors:timeout:)``.
        public func call(
            destination: String?,
            path: DBusObjectPath,
            interface: String?,
            member: String,
            body: [DBusValue] = [],
            descriptors: [Int32] = [],
            timeout: Duration = defaultTimeout
        ) async throws -> DBusReceivedMessage {
            try await call(
                .methodCall(destination: destination, path: path, interface: interface, member: member, body: body),
                descriptors: descriptors,
                timeout: timeout
            )
        }

        /// Sends a method call now and returns at once; the reply is awaited later. Calls started
        /// one after another leave in that order (a `WriteValue` stream stays in order), and they do
        /// not count toward ``maximumPendingCalls``: the caller bounds how many it keeps in flight.
        /// - Parameters:
        ///   - message: a method call.
        ///   - timeout: how long the reply may take.
        /// - Returns: the pending reply.
        /// - Throws: ``DBusError`` when the connection is closed or the message cannot be encoded.
        public func startCall(_ message: DBusMessage, timeout: Duration = defaultTimeout) throws(DBusError)
            -> DBusPendingReply
        {
            let reply = DBusPendingReply()
            let serial = try begin(message, descriptors: []) { reply.fulfil($0) }
            scheduleTimeout(serial: serial, after: timeout, member: message.member ?? "?")
            return reply
        }

        /// A timer per call, cancelled by the reply, so no sleeping task outlives a fast call.
        private func scheduleTimeout(serial: UInt32, after timeout: Duration, member: String) {
            let timer = Task { [weak self] in
                do {
                    try await Task.sleep(for: timeout)
                } catch {
                    return
                }
                self?.fail(serial: serial, with: DBusError(.timeout, "no reply to \(member) within \(timeout)"))
            }
            let answered = state.withLock { state -> Bool in
                guard state.pending[serial] != nil else { return true }
                state.pending[serial]?.timer = timer
                return false
            }
            if answered { timer.cancel() }
        }

        private func fail(serial: UInt32, with error: any Error) {
            let call = state.withLock { $0.pending.removeValue(forKey: serial) }
            call?.timer?.cancel()
            call?.complete(.failure(error))
        }

        // MARK: - Signals

        /// Asks the bus to forward the signals a rule describes and returns them as they arrive.
        /// The stream finishes when the connection closes.
        /// - Parameter rule: the rule.
        /// - Returns: the matching signals, in arrival order.
        /// - Throws: what `AddMatch` throws.
        public func signals(matching rule: DBusMatchRule) async throws -> AsyncStream<DBusReceivedMessage> {
            let stream = subscribe(rule)
            _ = try await call(
                destination: "org.freedesktop.DBus",
                path: "/org/freedesktop/DBus",
                interface: "org.freedesktop.DBus",
                member: "AddMatch",
                body: [.string(rule.description)]
            )
            return stream
        }

        /// Signals this connection receives that match `rule` locally (without `AddMatch`: for
        /// signals the bus sends anyway, or rules added before).
        /// - Parameter rule: the rule, or `nil` for every signal.
        /// - Returns: the stream; it finishes when the connection closes.
        public func subscribe(_ rule: DBusMatchRule?) -> AsyncStream<DBusReceivedMessage> {
            let (stream, continuation) = AsyncStream.makeStream(of: DBusReceivedMessage.self)
            let closed = state.withLock { state -> Bool in
                guard state.closeReason == nil else { return true }
                let id = state.nextSubscriber
                state.nextSubscriber += 1
                state.subscribers[id] = (rule, continuation)
                continuation.onTermination = { [weak self] _ in
                    _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
                }
                return false
            }
            if closed { continuation.finish() }
            return stream
        }

        // MARK: - Closing

        /// Closes the connection: pending calls fail with `.disconnected`, signal streams finish.
        public func close() {
            finish(DBusError(.disconnected, "the connection was closed"))
        }

        /// Whether the connection has closed (by us, the bus, or an error).
        public var isClosed: Bool { state.withLock { $0.closeReason != nil } }

        /// Waits until the connection closes.
        /// - Returns: why it closed.
        public func waitUntilClosed() async -> DBusError {
            await withCheckedContinuation { continuation in
                let reason = state.withLock { state -> DBusError? in
                    if let closeReason = state.closeReason { return closeReason }
                    state.closeWaiters.append(continuation)
                    return nil
                }
                if let reason { continuation.resume(returning: reason) }
            }
        }

        func finish(_ reason: DBusError) {
            let (calls, streams, waiters) = state.withLock {
                state -> (
                    [PendingCall], [AsyncStream<DBusReceivedMessage>.Continuation],
                    [CheckedContinuation<DBusError, Never>]
                ) in
                guard state.closeReason == nil else { return ([], [], []) }
                state.closeReason = reason
                defer {
                    state.pending = [:]
                    state.subscribers = [:]
                    state.closeWaiters = []
                }
                return (Array(state.pending.values), state.subscribers.values.map(\.1), state.closeWaiters)
            }
            socket.shutdown()
            inbox.finish()
            for call in calls {
                call.timer?.cancel()
                call.complete(.failure(reason))
            }
            for stream in streams { stream.finish() }
            for waiter in waiters { waiter.resume(returning: reason) }
        }

        deinit { socket.shutdown() }

        // MARK: - Receiving

        private func startReading(leftover: [UInt8]) {
            // The blocking read holds no reference to the connection, so one dropped without
            // `close()` is freed: its deinit shuts the socket down, and the read returns.
            BlockingReadLoop.start(
                name: "mcumgr.dbus.reader",
                state: DBusReader(socket: socket, leftover: leftover)
            ) { [weak self] reader in
                let next = Result { () throws(DBusError) in try reader.next() }
                guard let self else {
                    reader.closeUnclaimedDescriptors()
                    return false
                }
                switch next {
                case .success(let received?):
                    self.route(received)
                    return true
                case .success(nil):
                    reader.closeUnclaimedDescriptors()
                    self.finish(DBusError(.disconnected, "the bus closed the connection"))
                    return false
                case .failure(let error):
                    reader.closeUnclaimedDescriptors()
                    self.finish(error)
                    return false
                }
            }
        }

        /// Replies go to their waiting call at once; everything else to the ordered inbox.
        private func route(_ received: DBusReceivedMessage) {
            let message = received.message
            if message.kind == .methodReturn || message.kind == .error, let serial = message.replySerial {
                guard let call = state.withLock({ $0.pending.removeValue(forKey: serial) }) else { return }
                call.timer?.cancel()
                if message.kind == .error {
                    let name = message.errorName ?? "org.freedesktop.DBus.Error.Failed"
                    let text = message.body.first?.stringValue ?? ""
                    call.complete(.failure(DBusRemoteError(name: name, message: text)))
                } else {
                    call.complete(.success(received))
                }
                return
            }
            inbox.yield(received)
        }

        private func startDispatching(_ inbox: AsyncStream<DBusReceivedMessage>) {
            Task { [weak self] in
                for await received in inbox {
                    guard let self else { return }
                    switch received.message.kind {
                    case .signal: self.deliverSignal(received)
                    case .methodCall: await self.handleCall(received)
                    default: break
                    }
                }
            }
        }

        private func deliverSignal(_ received: DBusReceivedMessage) {
            let targets = state.withLock {
                $0.subscribers.values.filter { $0.0?.matches(received.message) ?? true }.map(\.1)
            }
            for target in targets { target.yield(received) }
        }
    }

    /// The reply to a call started with ``DBusConnection/startCall(_:timeout:)``.
    public final class DBusPendingReply: Sendable {
        private struct State {
            var result: Result<DBusReceivedMessage, any Error>?
            var waiters: [CheckedContinuation<DBusReceivedMessage, any Error>] = []
        }

        private let state = Locked(State())

        init() {}

        func fulfil(_ outcome: Result<DBusReceivedMessage, any Error>) {
            let toResume = state.withLock { state -> [CheckedContinuation<DBusReceivedMessage, any Error>] in
                guard state.result == nil else { return [] }
                state.result = outcome
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in toResume { waiter.resume(with: outcome) }
        }

        /// Waits for the reply.
        /// - Returns: the reply.
        /// - Throws: ``DBusRemoteError`` for an error reply, ``DBusError`` on timeout or disconnection.
        public func value() async throws -> DBusReceivedMessage {
            try await withCheckedThrowingContinuation { continuation in
                let done = state.withLock { state -> Result<DBusReceivedMessage, any Error>? in
                    if let result = state.result { return result }
                    state.waiters.append(continuation)
                    return nil
                }
                if let done { continuation.resume(with: done) }
            }
        }
    }

    /// A call waiting for its reply, and its timer.
    struct PendingCall {
        var complete: @Sendable (Result<DBusReceivedMessage, any Error>) -> Void
        var timer: Task<Void, Never>?
    }

    /// Counts calls in flight; a call beyond the limit waits for one to finish.
    final class DBusSlots: Sendable {
        private struct State {
            var used = 0
            var waiters: [CheckedContinuation<Void, Never>] = []
        }

        private let limit: Int
        private let state = Locked(State())

        init(limit: Int) { self.limit = limit }

        func acquire() async throws {
            try Task.checkCancellation()
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let granted = state.withLock { state -> Bool in
                    if state.used < limit {
                        state.used += 1
                        return true
                    }
                    state.waiters.append(continuation)
                    return false
                }
                if granted { continuation.resume() }
            }
        }

        func release() {
            let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
                if state.waiters.isEmpty {
                    state.used -= 1
                    return nil
                }
                return state.waiters.removeFirst()
            }
            next?.resume()
        }
    }
#endif
