import Foundation

/// Which advertising peripheral a scan connects to: the one named or identified by the target, or,
/// when reconnecting, the only one that advertises the SMP service.
///
/// A device that resets into a loader or recovery image (MCUboot serial recovery over BLE,
/// nRF Connect SDK's firmware loader) often advertises under another name, and may come back under
/// another identifier (a new address). Looking only for the old name or identifier would then find
/// nothing. So a scan made to reconnect (``acceptsSMPService``) also collects peripherals that
/// advertise the SMP service; once the scan has run ``settleDelay(scanTimeout:)`` without a match
/// by name or identifier, it takes such a peripheral, but only when it is the only one seen: with
/// several, taking one at random could update the wrong device, so the scan goes on for the
/// target and its failure says why.
///
/// Pure; the CoreBluetooth central feeds it advertisements on its queue.
struct PeripheralSearch: Sendable {
    /// What one advertisement tells about a peripheral.
    struct Advertisement: Sendable, Equatable {
        /// The peripheral's identifier (CoreBluetooth's per-host UUID).
        var identifier: UUID
        /// The peripheral's name as the system knows it (GAP name), if any.
        var name: String?
        /// The advertised local name, if any.
        var advertisedName: String?
        /// The advertisement lists the SMP service UUID.
        var advertisesSMPService: Bool
    }

    /// What the central does after an advertisement or the settle delay.
    enum Decision: Sendable, Equatable {
        /// Stop scanning and connect to this peripheral.
        case connect(UUID)
        /// Go on scanning.
        case keepScanning
    }

    /// A name, an identifier (UUID string), or empty for the first peripheral with the SMP service.
    let target: String
    /// This scan reconnects a device this central has connected to before, so a lone peripheral
    /// advertising the SMP service is taken when nothing matches the target.
    let acceptsSMPService: Bool
    /// Peripherals seen advertising the SMP service without matching the target, in order.
    private(set) var smpCandidates: [UUID] = []
    /// The settle delay has passed.
    private(set) var isSettled = false

    init(target: String, acceptsSMPService: Bool) {
        self.target = target
        self.acceptsSMPService = acceptsSMPService
    }

    /// How long a reconnecting scan waits for a peripheral matching the target before it takes a
    /// lone SMP peripheral: long enough for the advertisements of the devices around to arrive
    /// (advertising intervals reach ~1 s), short against the scan.
    /// - Parameter scanTimeout: the scan's whole duration.
    /// - Returns: the smaller of 2 s and half the scan.
    static func settleDelay(scanTimeout: Duration) -> Duration {
        min(.seconds(2), scanTimeout / 2)
    }

    /// Whether a peripheral is the target itself (by identifier or name).
    /// - Parameters:
    ///   - identifier: its identifier.
    ///   - name: the system's name for it.
    ///   - advertisedName: the advertised local name.
    /// - Returns: `true` when it matches; an empty target matches any peripheral.
    func matchesTarget(identifier: UUID, name: String?, advertisedName: String?) -> Bool {
        if target.isEmpty { return true }
        if identifier.uuidString.caseInsensitiveCompare(target) == .orderedSame { return true }
        return name == target || advertisedName == target
    }

    /// One advertisement arrived.
    /// - Parameter advertisement: what it says.
    /// - Returns: whom to connect to, or to keep scanning.
    mutating func discovered(_ advertisement: Advertisement) -> Decision {
        let matches = matchesTarget(
            identifier: advertisement.identifier,
            name: advertisement.name,
            advertisedName: advertisement.advertisedName
        )
        if matches { return .connect(advertisement.identifier) }
        guard acceptsSMPService, advertisement.advertisesSMPService else { return .keepScanning }
        if !smpCandidates.contains(advertisement.identifier) { smpCandidates.append(advertisement.identifier) }
        return isSettled ? loneCandidate() : .keepScanning
    }

    /// The settle delay has passed without a match by name or identifier.
    /// - Returns: the lone SMP peripheral if there is exactly one, else to keep scanning.
    mutating func settled() -> Decision {
        isSettled = true
        return loneCandidate()
    }

    /// Why the scan found nothing, for its timeout error.
    var failureMessage: String {
        let what = target.isEmpty ? "no peripheral with the SMP service found" : "no peripheral '\(target)' found"
        guard acceptsSMPService, smpCandidates.count > 1 else { return what }
        return "\(what); \(smpCandidates.count) peripherals advertise the SMP service, so none was taken "
            + "(give the device's current name or identifier)"
    }

    private func loneCandidate() -> Decision {
        guard acceptsSMPService, smpCandidates.count == 1, let only = smpCandidates.first else {
            return .keepScanning
        }
        return .connect(only)
    }
}
