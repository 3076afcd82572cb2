import Foundation
import SMPTestSupport
import Testing

@testable import MCUmgrFleet

/// The lease a worker's frames to a shared device wait for, on a clock the test advances.
@Suite struct DeviceLeaseTests {
    static let origin = Date(timeIntervalSince1970: 4_000_000)

    @Test func framesPassWhileTheLeaseHoldsLessAThird() async throws {
        let clock = ManualClock()
        let lease = DeviceLease(asked: .zero, lease: .seconds(30), clock: FleetClock(clock, origin: Self.origin))
        try await lease.permit()
        clock.advance(by: .seconds(19))
        try await lease.permit()
    }

    @Test func afterItsEndAFrameWaitsForTheRenewal() async throws {
        let clock = ManualClock()
        let fleetClock = FleetClock(clock, origin: Self.origin)
        let lease = DeviceLease(asked: .zero, lease: .seconds(30), clock: fleetClock)
        clock.advance(by: .seconds(20))
        // Past the end, frames wait; revoked, they are refused, whether waiting already or not.
        let waiting = Task { try await lease.permit() }
        let renewed = Task { try await lease.permit() }
        await lease.revoke()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        await #expect(throws: CancellationError.self) { try await renewed.value }

        let second = DeviceLease(asked: .seconds(20), lease: .seconds(30), clock: fleetClock)
        clock.advance(by: .seconds(20))
        let held = Task { try await second.permit() }
        await second.renewed(asked: fleetClock.elapsed, lease: .seconds(30))
        try await held.value
    }

    @Test func aRenewalAskedBeforeTheEndDoesNotShortenTheLease() async throws {
        let clock = ManualClock()
        let fleetClock = FleetClock(clock, origin: Self.origin)
        let lease = DeviceLease(asked: .seconds(10), lease: .seconds(30), clock: fleetClock)
        await lease.renewed(asked: .zero, lease: .seconds(30))
        clock.advance(by: .seconds(29))
        try await lease.permit()
    }

    @Test func aRevokedLeaseRefusesEveryFrame() async {
        let lease = DeviceLease(
            asked: .zero,
            lease: .seconds(30),
            clock: FleetClock(ManualClock(), origin: Self.origin)
        )
        await lease.revoke()
        await #expect(throws: CancellationError.self) { try await lease.permit() }
    }

    @Test func theClockDatesRecordsFromItsOriginAndSleepsUntilADate() async throws {
        let clock = ManualClock()
        let fleetClock = FleetClock(clock, origin: Self.origin)
        #expect(fleetClock.now == Self.origin)
        let woke = Task { try await fleetClock.sleep(until: Self.origin.addingTimeInterval(90)) }
        clock.advance(by: .seconds(90))
        try await woke.value
        #expect(fleetClock.now == Self.origin.addingTimeInterval(90))
    }
}
