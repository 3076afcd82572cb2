/// What an open GATT link does when the peripheral's services change under it
/// (CoreBluetooth's `peripheral(_:didModifyServices:)`, the device's Service Changed indication).
///
/// After a swap, or when a device's image changes its GATT database, the SMP service and
/// characteristic the link holds are invalidated: writes to them go nowhere and no notification
/// comes, so the link would go silent. Instead the link pauses its writes and rediscovers, as a
/// connection does: the SMP service, its characteristic, the subscription; then it resumes with
/// the new characteristic. When the service is gone, or a step fails or takes too long, the link
/// ends with the reason (the transport then reconnects or reports it).
///
/// Pure; the CoreBluetooth central drives it on its queue and performs each ``Action``.
struct ServiceRediscovery: Sendable {
    /// Where a rediscovery stands.
    enum Phase: Sendable, Equatable {
        /// Nothing to do: the link's characteristic is valid.
        case idle
        /// Waiting for the services (`discoverServices`).
        case services
        /// Waiting for the SMP characteristic (`discoverCharacteristics`).
        case characteristic
        /// Waiting for notifications to be on again (`setNotifyValue`).
        case subscribing
    }

    /// What the central does next.
    enum Action: Sendable, Equatable {
        /// Nothing (the event does not concern the link, or arrived late).
        case none
        /// Pause the link's writes and discover the SMP service; start the timer for `attempt`.
        case discoverServices(attempt: Int)
        /// Discover the SMP characteristic in the service found.
        case discoverCharacteristic
        /// Subscribe to the characteristic found.
        case subscribe
        /// Give the link the new characteristic and let its writes go on.
        case resume
        /// End the link with this reason.
        case end(String)
    }

    private(set) var phase = Phase.idle
    /// Numbers each rediscovery, so a timer of an earlier one ends nothing.
    private(set) var attempt = 0

    /// The link's writes wait while a rediscovery runs.
    var isPaused: Bool { phase != .idle }

    /// The peripheral reported changed services.
    /// - Parameter invalidatesSMP: the SMP service is among the invalidated ones.
    /// - Returns: ``Action/discoverServices(attempt:)``, or nothing when SMP is untouched. A change
    ///   during a rediscovery starts it again, since what it found may be stale.
    mutating func servicesModified(invalidatesSMP: Bool) -> Action {
        guard invalidatesSMP else { return .none }
        attempt += 1
        phase = .services
        return .discoverServices(attempt: attempt)
    }

    /// The services were discovered.
    /// - Parameters:
    ///   - smpServiceFound: the SMP service is among them.
    ///   - failed: the discovery reported an error.
    /// - Returns: the next step, or the end of the link.
    mutating func servicesDiscovered(smpServiceFound: Bool, failed: Bool) -> Action {
        guard phase == .services else { return .none }
        guard smpServiceFound, !failed else {
            return end(failed ? "could not discover the services again" : "the device no longer offers the SMP service")
        }
        phase = .characteristic
        return .discoverCharacteristic
    }

    /// The SMP service's characteristics were discovered.
    /// - Parameter usable: the SMP characteristic is there with write-without-response and notify.
    /// - Returns: the next step, or the end of the link.
    mutating func characteristicDiscovered(usable: Bool) -> Action {
        guard phase == .characteristic else { return .none }
        guard usable else {
            return end("the device's SMP service no longer has a characteristic with write-without-response and notify")
        }
        phase = .subscribing
        return .subscribe
    }

    /// The notification state of the SMP characteristic changed.
    /// - Parameters:
    ///   - notifying: notifications are on.
    ///   - failed: the subscription reported an error.
    /// - Returns: ``Action/resume`` once notifying, the end of the link on an error.
    mutating func notificationStateUpdated(notifying: Bool, failed: Bool) -> Action {
        guard phase == .subscribing else { return .none }
        if failed { return end("could not subscribe again after the device's services changed") }
        guard notifying else { return .none }
        phase = .idle
        return .resume
    }

    /// The timer of rediscovery `attempt` fired.
    /// - Parameter attempt: the number ``Action/discoverServices(attempt:)`` gave.
    /// - Returns: the end of the link if that rediscovery is still running.
    mutating func timedOut(attempt: Int) -> Action {
        guard attempt == self.attempt, phase != .idle else { return .none }
        return end("the SMP service did not come back after the device's services changed")
    }

    /// The link went away: nothing is left to rediscover.
    mutating func cancel() {
        phase = .idle
    }

    private mutating func end(_ reason: String) -> Action {
        phase = .idle
        return .end(reason)
    }
}
