import Foundation
import MCUmgrConnect

/// What identifies a rollout in a store: the image and the mode. Running the same command again
/// (same file, same mode) resumes it; another image or mode is another rollout.
public struct RolloutDescription: Sendable, Hashable {
    /// The rollout's identity: the first 16 hex digits of the package's SHA-256, and the mode.
    public var id: String
    /// The package's file name, for people.
    public var file: String
    /// The upgrade mode.
    public var mode: String
    /// The package's image versions, for people.
    public var versions: [String]

    /// Creates a description.
    /// - Parameters:
    ///   - id: the identity.
    ///   - file: the package's file name.
    ///   - mode: the upgrade mode.
    ///   - versions: the image versions.
    public init(id: String, file: String, mode: String, versions: [String]) {
        self.id = id
        self.file = file
        self.mode = mode
        self.versions = versions
    }
}

/// A rollout a store holds, for a list: what it upgrades, when it was last started and how far
/// its devices are.
public struct RolloutListing: Sendable, Hashable {
    /// The rollout.
    public var rollout: RolloutDescription
    /// When a worker last started or resumed it.
    public var started: Date
    /// Its devices by status (statuses without devices are left out).
    public var counts: [DeviceRecord.Status: Int]

    /// Creates a listing.
    /// - Parameters:
    ///   - rollout: the rollout.
    ///   - started: when it was last started.
    ///   - counts: its devices by status.
    public init(rollout: RolloutDescription, started: Date, counts: [DeviceRecord.Status: Int]) {
        self.rollout = rollout
        self.started = started
        self.counts = counts
    }

    /// Adds one group of a query's rows (a rollout and one status with its count) to a list kept
    /// in the query's order: what both stores' `rollouts()` read.
    /// - Parameters:
    ///   - list: the listings so far.
    ///   - rollout: the row's rollout.
    ///   - started: when it was last started.
    ///   - status: the status of this group of devices (`nil`: a rollout without devices).
    ///   - count: how many devices.
    /// - Throws: ``RolloutStoreError`` for a status this version does not know.
    package static func add(
        to list: inout [RolloutListing],
        _ rollout: RolloutDescription,
        started: Date,
        status: String?,
        count: Int
    ) throws {
        if list.last?.rollout.id != rollout.id {
            list.append(RolloutListing(rollout: rollout, started: started, counts: [:]))
        }
        guard let status else { return }
        guard let known = DeviceRecord.Status(rawValue: status) else {
            throw RolloutStoreError("rollout \(rollout.id) holds devices of an unknown status '\(status)'")
        }
        list[list.count - 1].counts[known, default: 0] += count
    }
}

/// Where a rollout's state lives, so that it survives the process: which devices are done,
/// failed, in progress, with attempts, errors, times and versions.
public protocol RolloutStore: Sendable {
    /// Opens a rollout, or resumes the one with the same identity: every inventory device gets a
    /// record (new devices pending; earlier records kept, in the inventory's order). Skipped
    /// devices are pending again; failed and unreachable ones only with `retryFailed`. A record
    /// whose URL is not the inventory's is another device's: it is replaced by a new pending
    /// record (see ``DeviceRecord/belongs(to:)``).
    /// - Parameters:
    ///   - rollout: the rollout.
    ///   - devices: the inventory, in order.
    ///   - retryFailed: start failed and unreachable devices again.
    /// - Returns: the records, in inventory order.
    /// - Throws: ``RolloutStoreError`` when the store cannot be read or written.
    func prepare(_ rollout: RolloutDescription, devices: [Inventory.Device], retryFailed: Bool) async throws
        -> [DeviceRecord]

    /// Writes records of a rollout.
    /// - Parameters:
    ///   - records: the records that changed.
    ///   - rollout: the rollout's identity.
    /// - Throws: ``RolloutStoreError`` when the store cannot be written.
    func save(_ records: [DeviceRecord], rollout: String) async throws

    /// The rollout last prepared (or the one named), with its records.
    /// - Parameter id: a rollout's identity, or `nil` for the latest.
    /// - Returns: the rollout and its records, or `nil` when the store holds none.
    /// - Throws: ``RolloutStoreError`` when the store cannot be read.
    func rollout(_ id: String?) async throws -> (RolloutDescription, [DeviceRecord])?

    /// Every rollout the store holds, the one started (or resumed) last first.
    /// - Returns: the rollouts with their devices' counts.
    /// - Throws: ``RolloutStoreError`` when the store cannot be read.
    func rollouts() async throws -> [RolloutListing]

    /// Records the version a running device first said it runs, at once, while the attempt is
    /// still the worker's: the first reading stays (``RolloutTransitions/versionRead(_:_:)``).
    /// Written as the device answers, beside the rollout's own saves, so that a process killed a
    /// moment later still has it.
    /// - Parameters:
    ///   - rollout: the rollout's identity.
    ///   - device: the device's identity.
    ///   - attempt: the attempt's number.
    ///   - worker: the worker that runs it.
    ///   - version: the version the device runs.
    /// - Throws: ``RolloutStoreError``.
    func versionRead(_ rollout: String, device: String, attempt: Int, worker: String, version: String) async throws

    /// Releases the store.
    func close() async

    /// The same store as one that several workers share a rollout through, when it is one
    /// (their claims and leases); `nil` for a store of one host.
    var sharing: (any SharedRolloutStore)? { get }
}

extension RolloutStore {
    /// A store of one host.
    public var sharing: (any SharedRolloutStore)? { nil }
}

/// A store that cannot be used, with what to try: its server cannot be reached or was lost, its
/// file is not a rollout state file, or (``isBadLocation``) the place given is not one at all.
/// Never a device's failure: a rollout that loses its store stops.
public struct RolloutStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, in one line.
    public var message: String
    /// Whether the location itself is wrong (not a PostgreSQL URL, an unknown option), which no
    /// retry mends, as opposed to a store that could not be reached, read or written.
    public var isBadLocation: Bool
    /// Creates an error.
    /// - Parameters:
    ///   - message: what failed.
    ///   - badLocation: whether the location itself is wrong.
    public init(_ message: String, badLocation: Bool = false) {
        self.message = message
        self.isBadLocation = badLocation
    }
    public var description: String { message }
}

extension DeviceRecord {
    /// Whether this is the record of the device the inventory names: the same name *and* the same
    /// URL. A name alone is not a device (every simulated fleet has a `sim-001`), and an outcome
    /// seen at one URL says nothing about whatever answers at another.
    /// - Parameter device: the inventory's device of the same name.
    public func belongs(to device: Inventory.Device) -> Bool {
        id == device.id && url == device.url.description
    }

    /// The record as prepared for a new run: skipped devices pending again, failed ones only when
    /// asked, and the inventory's current position and labels. A record of another URL is not
    /// this device's: the device is planned afresh, as a new one (its own image list decides).
    func prepared(for device: Inventory.Device, position: Int, retryFailed: Bool) -> DeviceRecord {
        guard belongs(to: device) else {
            return DeviceRecord(id: device.id, url: device.url.description, position: position, labels: device.labels)
        }
        var record = self
        record.position = position
        record.labels = device.labels
        if record.status == .skipped || (retryFailed && record.status.isFailure) {
            record.status = .pending
            record.notBefore = nil
            record.linkFailures = 0
            record.failure = nil
            // A retried device is not a canary that failed any more.
            if record.phase == .canary { record.phase = nil }
        }
        return record
    }
}
