import Testing

@testable import SMPBLETransport

/// After the peripheral's services change (a swap, a new image), the open link rediscovers the SMP
/// service and characteristic and subscribes again instead of going silent.
@Suite struct ServiceRediscoveryTests {
    /// The whole way: pause, services, characteristic, subscription, resume.
    @Test func rediscoversAndResumes() {
        var rediscovery = ServiceRediscovery()
        #expect(!rediscovery.isPaused)
        let action1 = rediscovery.servicesModified(invalidatesSMP: true)
        #expect(action1 == .discoverServices(attempt: 1))
        #expect(rediscovery.isPaused)
        let action2 = rediscovery.servicesDiscovered(smpServiceFound: true, failed: false)
        #expect(action2 == .discoverCharacteristic)
        let action3 = rediscovery.characteristicDiscovered(usable: true)
        #expect(action3 == .subscribe)
        // A state update without notifications on yet is not the end.
        let action4 = rediscovery.notificationStateUpdated(notifying: false, failed: false)
        #expect(action4 == .none)
        let action5 = rediscovery.notificationStateUpdated(notifying: true, failed: false)
        #expect(action5 == .resume)
        #expect(!rediscovery.isPaused)
        // Its timer, firing after it finished, ends nothing.
        let action6 = rediscovery.timedOut(attempt: 1)
        #expect(action6 == .none)
    }

    /// A change that leaves the SMP service alone does not disturb the link.
    @Test func unrelatedChangeIsIgnored() {
        var rediscovery = ServiceRediscovery()
        let action7 = rediscovery.servicesModified(invalidatesSMP: false)
        #expect(action7 == .none)
        #expect(!rediscovery.isPaused)
        let action8 = rediscovery.servicesDiscovered(smpServiceFound: true, failed: false)
        #expect(action8 == .none)
    }

    /// When the service does not come back, or a step fails, the link ends with the reason.
    @Test func endsWhenSMPIsGoneOrAStepFails() {
        var gone = ServiceRediscovery()
        _ = gone.servicesModified(invalidatesSMP: true)
        let action9 = gone.servicesDiscovered(smpServiceFound: false, failed: false)
        #expect(action9 == .end("the device no longer offers the SMP service"))
        #expect(!gone.isPaused)

        var noCharacteristic = ServiceRediscovery()
        _ = noCharacteristic.servicesModified(invalidatesSMP: true)
        _ = noCharacteristic.servicesDiscovered(smpServiceFound: true, failed: false)
        guard case .end = noCharacteristic.characteristicDiscovered(usable: false) else {
            Issue.record("a missing characteristic must end the link")
            return
        }

        var refused = ServiceRediscovery()
        _ = refused.servicesModified(invalidatesSMP: true)
        _ = refused.servicesDiscovered(smpServiceFound: true, failed: false)
        _ = refused.characteristicDiscovered(usable: true)
        let action10 = refused.notificationStateUpdated(notifying: false, failed: true)
        #expect(action10 == .end("could not subscribe again after the device's services changed"))
    }

    /// A rediscovery that hangs ends at its own timer; an earlier attempt's timer ends nothing.
    @Test func timerEndsOnlyItsOwnAttempt() {
        var rediscovery = ServiceRediscovery()
        let action11 = rediscovery.servicesModified(invalidatesSMP: true)
        #expect(action11 == .discoverServices(attempt: 1))
        // A second change restarts it: what the first found may be stale.
        _ = rediscovery.servicesDiscovered(smpServiceFound: true, failed: false)
        let action12 = rediscovery.servicesModified(invalidatesSMP: true)
        #expect(action12 == .discoverServices(attempt: 2))
        #expect(rediscovery.phase == .services)
        let action13 = rediscovery.timedOut(attempt: 1)
        #expect(action13 == .none)
        #expect(rediscovery.isPaused)
        let action14 = rediscovery.timedOut(attempt: 2)
        #expect(action14 == .end("the SMP service did not come back after the device's services changed"))
    }

    /// Answers out of order (late, or for another phase) change nothing.
    @Test func outOfPhaseEventsAreIgnored() {
        var rediscovery = ServiceRediscovery()
        _ = rediscovery.servicesModified(invalidatesSMP: true)
        let action15 = rediscovery.characteristicDiscovered(usable: true)
        #expect(action15 == .none)
        let action16 = rediscovery.notificationStateUpdated(notifying: true, failed: false)
        #expect(action16 == .none)
        #expect(rediscovery.phase == .services)
        rediscovery.cancel()
        let action17 = rediscovery.servicesDiscovered(smpServiceFound: true, failed: false)
        #expect(action17 == .none)
    }
}
