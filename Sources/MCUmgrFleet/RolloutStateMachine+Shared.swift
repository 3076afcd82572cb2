import Foundation
import MCUmgrConnect

/// The decisions of a rollout shared by several workers through a database: the same policies as
/// one host's (``RolloutGates``, ``RolloutTransitions``), taken from every record read under the
/// rollout's lock. A store only reads the records, calls these, and writes what they return.
extension RolloutStateMachine {
    /// What one claim decided, before the store locks the chosen devices' rows.
    public struct Claim: Sendable, Hashable {
        /// Every record after the lease expiries and closures.
        public var records: [DeviceRecord]
        /// Records to write as they are (devices back to pending, devices closed), with the
        /// lease each keeps (`nil`: none).
        public var writes: [Write]
        /// Devices ended by this claim: the rollout halted and nothing runs any more.
        public var closed: [DeviceRecord]
        /// Devices this worker may start, in order, with their phases: indexes into ``records``.
        public var candidates: [Candidate]
        /// The gate the records are at.
        public var verdict: RolloutGates.Verdict

        /// A record to write, and the lease it holds.
        public struct Write: Sendable, Hashable {
            /// The record.
            public var record: DeviceRecord
            /// The end of its lease, for a running device.
            public var leaseUntil: Date?
        }

        /// A device the gates allow to start.
        public struct Candidate: Sendable, Hashable {
            /// Its index in ``Claim/records``.
            public var index: Int
            /// The phase it starts in.
            public var phase: RolloutPhase
        }
    }

    /// Decides one claim of a shared rollout.
    ///
    /// Lease expiry: a running device whose lease ended before `now` is pending again (its worker
    /// died or stalled); one with no lease at all (written so by an older version) gets one from
    /// now, so it comes back unless a live worker renews it. Then the gates, as on one host: a
    /// halted rollout with nothing running ends its pending devices; otherwise up to `capacity`
    /// devices may start.
    /// - Parameters:
    ///   - records: every record of the rollout, with its lease.
    ///   - policy: the rollout's policy.
    ///   - worker: the claiming worker.
    ///   - capacity: how many upgrades it may start now.
    ///   - lease: how long a lease lasts.
    ///   - now: the database's time, read under the lock.
    /// - Returns: the decision.
    public static func claim(
        _ records: [DeviceRecord],
        policy: RolloutPolicy,
        worker: String,
        capacity: Int,
        lease: Duration,
        at now: Date
    ) -> Claim {
        var records = records
        var writes: [Claim.Write] = []
        for index in records.indices where records[index].status == .running {
            guard let until = records[index].leaseUntil else {
                let until = now.addingTimeInterval(RolloutTransitions.seconds(lease))
                records[index].leaseUntil = until
                writes.append(Claim.Write(record: records[index], leaseUntil: until))
                continue
            }
            guard until < now else { continue }
            records[index].status = .pending
            records[index].leaseUntil = nil
            writes.append(Claim.Write(record: records[index], leaseUntil: nil))
        }
        let verdict = RolloutGates.verdict(records, policy: policy)
        var closed: [DeviceRecord] = []
        if case .halted(let reason) = verdict, !records.contains(where: { $0.status == .running }) {
            for index in records.indices where records[index].status == .pending {
                records[index] = RolloutTransitions.close(records[index], reason: reason, at: now)
                closed.append(records[index])
                writes.append(Claim.Write(record: records[index], leaseUntil: nil))
            }
        }
        let candidates = RolloutGates.starts(records, policy: policy, worker: worker, now: now)
            .prefix(max(0, capacity))
            .map { Claim.Candidate(index: $0.index, phase: $0.phase) }
        return Claim(records: records, writes: writes, closed: closed, candidates: candidates, verdict: verdict)
    }

    /// The record of a claimed device that starts, and the end of its lease.
    /// - Parameters:
    ///   - record: the pending record.
    ///   - phase: the phase it starts in.
    ///   - worker: the claiming worker.
    ///   - lease: how long a lease lasts.
    ///   - now: the database's time.
    public static func started(
        _ record: DeviceRecord,
        phase: RolloutPhase,
        worker: String,
        lease: Duration,
        at now: Date
    ) -> Claim.Write {
        let record = RolloutTransitions.start(record, phase: phase, worker: worker, at: now)
        return Claim.Write(record: record, leaseUntil: now.addingTimeInterval(RolloutTransitions.seconds(lease)))
    }

    /// Decides how an attempt of a shared rollout ended: only while that attempt is still the
    /// device's and the device the worker's (a worker that lost its lease learns it here).
    /// A retry is scheduled only while the rollout still starts devices (not halted, not
    /// interrupted).
    /// - Parameters:
    ///   - records: every record of the rollout, read under its lock.
    ///   - device: the device.
    ///   - attempt: the attempt's number.
    ///   - worker: the worker reporting.
    ///   - result: how the attempt ended.
    ///   - policy: the rollout's policy.
    ///   - now: the database's time.
    /// - Returns: the device's record and its retry time; `nil` when the attempt is not the
    ///   device's any more (its end is dropped).
    public static func finish(
        _ records: [DeviceRecord],
        device: String,
        attempt: Int,
        worker: String,
        result: AttemptResult,
        policy: RolloutPolicy,
        at now: Date
    ) -> (record: DeviceRecord, retryAt: Date?)? {
        guard let record = records.first(where: { $0.id == device }), record.status == .running,
            record.worker == worker, record.attempts == attempt
        else { return nil }
        var rolling = true
        if case .halted = RolloutGates.verdict(records, policy: policy) { rolling = false }
        if case .interrupted = result { rolling = false }
        var (ended, retryAt) = RolloutTransitions.end(record, result, policy: policy, rolling: rolling, at: now)
        ended.leaseUntil = nil
        return (ended, retryAt)
    }

    /// The records of a rollout that opens or resumes on one host: every inventory device, in
    /// inventory order, from its earlier record when it has one (`DeviceRecord.prepared(for:position:retryFailed:)`).
    /// - Parameters:
    ///   - existing: the rollout's records in the store.
    ///   - devices: the inventory.
    ///   - retryFailed: start failed and unreachable devices again.
    public static func prepare(_ existing: [DeviceRecord], devices: [Inventory.Device], retryFailed: Bool)
        -> [DeviceRecord]
    {
        let byID = Dictionary(existing.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        return devices.enumerated().map { position, device in
            (byID[device.id] ?? fresh(device, position: position))
                .prepared(for: device, position: position, retryFailed: retryFailed)
        }
    }

    /// The records of a shared rollout that a worker opens or joins: as on one host, except that
    /// a device some worker runs keeps its record (only its inventory facts change) and its
    /// lease — written as none, it would never expire, and a worker that dies now would wedge the
    /// rollout.
    /// - Parameters:
    ///   - existing: the rollout's records, with their leases, read under the rollout's lock.
    ///   - devices: this worker's inventory.
    ///   - retryFailed: start failed and unreachable devices again.
    ///   - now: the database's time.
    /// - Returns: every record to write, with its lease.
    /// - Throws: ``RolloutStoreError`` when a worker upgrades the device of a name at another URL
    ///   right now (the workers were given different inventories: replacing the record would
    ///   leave that upgrade unrecorded).
    public static func prepareShared(
        _ existing: [DeviceRecord],
        devices: [Inventory.Device],
        retryFailed: Bool,
        at now: Date
    ) throws(RolloutStoreError) -> [Claim.Write] {
        let byID = Dictionary(existing.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        var writes: [Claim.Write] = []
        for (position, device) in devices.enumerated() {
            var record = byID[device.id] ?? fresh(device, position: position)
            let runningHere = record.status == .running && record.belongs(to: device)
            if record.status == .running, !runningHere, record.leaseUntil.map({ $0 >= now }) ?? true {
                throw RolloutStoreError(
                    "\(device.id) is being upgraded at \(record.url) by worker \(record.worker ?? "?"), but this inventory has \(device.url.description); give every worker the same inventory, or this one another --state"
                )
            }
            let lease = runningHere ? record.leaseUntil : nil
            if runningHere {
                record.position = position
                record.labels = device.labels
            } else {
                record = record.prepared(for: device, position: position, retryFailed: retryFailed)
            }
            record.leaseUntil = nil
            writes.append(Claim.Write(record: record, leaseUntil: lease))
        }
        return writes
    }

    private static func fresh(_ device: Inventory.Device, position: Int) -> DeviceRecord {
        DeviceRecord(id: device.id, url: device.url.description, position: position, labels: device.labels)
    }
}
