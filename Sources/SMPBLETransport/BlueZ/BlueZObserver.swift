// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import Foundation
    import SMPBytes
    import SMPDBus

    /// BlueZ's object tree kept current from its signals, for one D-Bus connection: waits for a
    /// condition on the tree (a device found, `ServicesResolved` true) and hands every signal to an
    /// optional handler (the link's notifications and disconnections).
    ///
    /// One task consumes the signals, in order; the tree is read under a lock.
    final class BlueZObserver: Sendable {
        private struct State {
            var tree: BlueZObjectTree
            var ended = false
            var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
            var nextWaiter = 0
            /// Timers that fired before their waiter was registered.
            var earlyWakes: Set<Int> = []
            var handler: (@Sendable (DBusMessage) -> Void)?
            /// The task consuming the signals: set once by ``start(_:)``, cancelled by ``cancel()``
            /// from any task (it was a plain `var`, written and read unlocked).
            var pump: Task<Void, Never>?
            /// Whether ``cancel()`` came before the pump was set: it is then cancelled as it is set.
            var cancelled = false
        }

        private let state: Locked<State>

        private init(tree: BlueZObjectTree) {
            state = Locked(State(tree: tree))
        }

        /// Subscribes to BlueZ's signals (objects added and removed, property changes, BlueZ's name
        /// changing owner), then reads the tree, so no change falls between the two.
        static func start(_ connection: DBusConnection) async throws -> BlueZObserver {
            let signals = connection.subscribe(nil)
            let rules = [
                DBusMatchRule(sender: BlueZ.service, interface: BlueZ.objectManagerInterface),
                DBusMatchRule(sender: BlueZ.service, interface: BlueZ.propertiesInterface, member: "PropertiesChanged"),
                DBusMatchRule(
                    sender: "org.freedesktop.DBus",
                    interface: "org.freedesktop.DBus",
                    member: "NameOwnerChanged",
                    arg0: BlueZ.service
                ),
            ]
            for rule in rules {
                _ = try await connection.call(
                    destination: "org.freedesktop.DBus",
                    path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus",
                    member: "AddMatch",
                    body: [.string(rule.description)]
                )
            }
            let observer = BlueZObserver(tree: try await BlueZ.managedObjects(connection))
            let pump = Task { [weak observer] in
                for await signal in signals { observer?.apply(signal.message) }
                observer?.end()
            }
            let cancelled = observer.state.withLock { state in
                state.pump = pump
                return state.cancelled
            }
            if cancelled { pump.cancel() }
            return observer
        }

        /// The tree now.
        var snapshot: BlueZObjectTree { state.withLock { $0.tree } }

        /// Sets the function every signal is handed to after the tree took it.
        func onSignal(_ handler: @escaping @Sendable (DBusMessage) -> Void) {
            state.withLock { $0.handler = handler }
        }

        /// Stops consuming signals.
        func cancel() {
            let pump = state.withLock { state in
                state.cancelled = true
                return state.pump
            }
            pump?.cancel()
            end()
        }

        private func apply(_ message: DBusMessage) {
            let (handler, toWake) = state.withLock {
                state -> ((@Sendable (DBusMessage) -> Void)?, [CheckedContinuation<Void, Never>]) in
                Self.update(&state.tree, with: message)
                defer { state.waiters = [:] }
                return (state.handler, Array(state.waiters.values))
            }
            handler?(message)
            for waiter in toWake { waiter.resume() }
        }

        private static func update(_ tree: inout BlueZObjectTree, with message: DBusMessage) {
            let body = message.body
            switch (message.interface, message.member) {
            case (BlueZ.objectManagerInterface, "InterfacesAdded"):
                if body.count == 2, case .objectPath(let path) = body[0] { tree.add(path, interfaces: body[1]) }
            case (BlueZ.objectManagerInterface, "InterfacesRemoved"):
                if body.count == 2, case .objectPath(let path) = body[0] {
                    tree.remove(path, interfaces: body[1].stringArray ?? [])
                }
            case (BlueZ.propertiesInterface, "PropertiesChanged"):
                guard body.count >= 2, let path = message.path, let interface = body[0].stringValue,
                    let changed = body[1].stringDictionary
                else { return }
                tree.update(
                    path,
                    interface: interface,
                    changed: changed,
                    invalidated: body.count > 2 ? body[2].stringArray ?? [] : []
                )
            default:
                break
            }
        }

        private func end() {
            let toWake = state.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.ended = true
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in toWake { waiter.resume() }
        }

        /// Waits until `check` finds something in the tree, the timeout passes, or the signals end.
        /// - Returns: what `check` found, or `nil`.
        func wait<T>(timeout: Duration, _ check: (BlueZObjectTree) -> T?) async -> T? {
            let deadline = ContinuousClock.now + timeout
            while true {
                let (current, over) = state.withLock { ($0.tree, $0.ended) }
                if let found = check(current) { return found }
                if over || ContinuousClock.now >= deadline || Task.isCancelled { return nil }
                await change(before: deadline)
            }
        }

        /// Suspends until the next signal, the deadline or at most one second (then the caller
        /// looks again).
        private func change(before deadline: ContinuousClock.Instant) async {
            let id = state.withLock { state -> Int in
                defer { state.nextWaiter += 1 }
                return state.nextWaiter
            }
            let timer = Task { [weak self] in
                do {
                    try await Task.sleep(until: min(deadline, .now + .seconds(1)), clock: .continuous)
                } catch {
                    return
                }
                self?.wake(id)
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.ended || state.earlyWakes.remove(id) != nil { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
            timer.cancel()
            state.withLock { _ = $0.earlyWakes.remove(id) }
        }

        private func wake(_ id: Int) {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.earlyWakes.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.resume()
        }
    }
#endif
