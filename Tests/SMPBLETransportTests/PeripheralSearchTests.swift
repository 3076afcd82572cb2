import Foundation
import Testing

@testable import SMPBLETransport

/// Finding the device again after it reset into a loader or recovery image (new name, new
/// identifier): a reconnecting scan falls back to the only peripheral advertising the SMP service.
@Suite struct PeripheralSearchTests {
    static let old = UUID()
    static let loader = UUID()
    static let neighbour = UUID()

    static func advertisement(
        _ identifier: UUID,
        name: String? = nil,
        advertised: String? = nil,
        smp: Bool = false
    ) -> PeripheralSearch.Advertisement {
        .init(identifier: identifier, name: name, advertisedName: advertised, advertisesSMPService: smp)
    }

    /// The target by name, advertised name or identifier (any case) is taken at once.
    @Test func targetMatchesAtOnce() {
        var byName = PeripheralSearch(target: "Zephyr", acceptsSMPService: false)
        let decision1 = byName.discovered(Self.advertisement(Self.old, name: "Zephyr"))
        #expect(decision1 == .connect(Self.old))
        var byAdvertisedName = PeripheralSearch(target: "Zephyr", acceptsSMPService: true)
        let decision2 = byAdvertisedName.discovered(Self.advertisement(Self.old, advertised: "Zephyr"))
        #expect(decision2 == .connect(Self.old))
        var byIdentifier = PeripheralSearch(target: Self.old.uuidString.lowercased(), acceptsSMPService: false)
        let decision3 = byIdentifier.discovered(Self.advertisement(Self.old))
        #expect(decision3 == .connect(Self.old))
    }

    /// A first connection never takes another device because it advertises SMP.
    @Test func firstConnectionIgnoresOtherSMPPeripherals() {
        var search = PeripheralSearch(target: "Zephyr", acceptsSMPService: false)
        let decision4 = search.discovered(Self.advertisement(Self.loader, advertised: "FL_1234", smp: true))
        #expect(decision4 == .keepScanning)
        let decision5 = search.settled()
        #expect(decision5 == .keepScanning)
        #expect(search.failureMessage == "no peripheral 'Zephyr' found")
    }

    /// A reconnect by name: the loader under another name is taken once the settle delay passes.
    @Test func reconnectByNameTakesTheLoneSMPPeripheralAfterSettling() {
        var search = PeripheralSearch(target: "Zephyr", acceptsSMPService: true)
        let decision6 = search.discovered(Self.advertisement(Self.neighbour, name: "Headphones"))
        #expect(decision6 == .keepScanning)
        let decision7 = search.discovered(Self.advertisement(Self.loader, advertised: "FL_1234", smp: true))
        #expect(decision7 == .keepScanning)
        let decision8 = search.settled()
        #expect(decision8 == .connect(Self.loader))
    }

    /// A reconnect by identifier (the identifier the loader no longer has) falls back the same way,
    /// also when the lone SMP peripheral shows up only after the settle delay.
    @Test func reconnectByIdentifierTakesALateLoneSMPPeripheral() {
        var search = PeripheralSearch(target: Self.old.uuidString, acceptsSMPService: true)
        let decision9 = search.settled()
        #expect(decision9 == .keepScanning)
        let decision10 = search.discovered(Self.advertisement(Self.loader, smp: true))
        #expect(decision10 == .connect(Self.loader))
    }

    /// The target, if it appears, wins over an SMP peripheral seen before it.
    @Test func targetWinsOverAnEarlierSMPPeripheral() {
        var search = PeripheralSearch(target: "Zephyr", acceptsSMPService: true)
        let decision11 = search.discovered(Self.advertisement(Self.neighbour, smp: true))
        #expect(decision11 == .keepScanning)
        let decision12 = search.discovered(Self.advertisement(Self.old, advertised: "Zephyr", smp: true))
        #expect(decision12 == .connect(Self.old))
    }

    /// With two SMP peripherals around, neither is taken (it could be the wrong device), and the
    /// failure says why; the same one seen twice counts once.
    @Test func severalSMPPeripheralsAreNeverTaken() {
        var search = PeripheralSearch(target: "Zephyr", acceptsSMPService: true)
        let decision13 = search.discovered(Self.advertisement(Self.loader, smp: true))
        #expect(decision13 == .keepScanning)
        let decision14 = search.discovered(Self.advertisement(Self.loader, smp: true))
        #expect(decision14 == .keepScanning)
        #expect(search.smpCandidates == [Self.loader])
        let decision15 = search.discovered(Self.advertisement(Self.neighbour, smp: true))
        #expect(decision15 == .keepScanning)
        let decision16 = search.settled()
        #expect(decision16 == .keepScanning)
        let decision17 = search.discovered(Self.advertisement(UUID(), smp: true))
        #expect(decision17 == .keepScanning)
        #expect(
            search.failureMessage
                == "no peripheral 'Zephyr' found; 3 peripherals advertise the SMP service, so none was taken "
                + "(give the device's current name or identifier)"
        )
    }

    /// A peripheral that does not advertise SMP is never a fallback.
    @Test func nonSMPPeripheralIsNoFallback() {
        var search = PeripheralSearch(target: "Zephyr", acceptsSMPService: true)
        let decision18 = search.discovered(Self.advertisement(Self.neighbour, name: "Other"))
        #expect(decision18 == .keepScanning)
        let decision19 = search.settled()
        #expect(decision19 == .keepScanning)
    }

    /// An empty target takes the first peripheral (the scan is filtered by the SMP service).
    @Test func emptyTargetTakesTheFirst() {
        var search = PeripheralSearch(target: "", acceptsSMPService: false)
        let decision20 = search.discovered(Self.advertisement(Self.loader))
        #expect(decision20 == .connect(Self.loader))
    }

    /// The settle delay is at most 2 s and at most half the scan.
    @Test func settleDelayIsBounded() {
        #expect(PeripheralSearch.settleDelay(scanTimeout: .seconds(10)) == .seconds(2))
        #expect(PeripheralSearch.settleDelay(scanTimeout: .seconds(3)) == .milliseconds(1500))
    }
}
