import Foundation
import MCUboot
import MCUmgrDFU
import SMPCore
import SMPLink

/// Starts one device's upgrade for either driver, follows it, and reports how it ended to the
/// driver's inbox: the one place a rollout turns a record into a running `FirmwareUpgrade`.
struct FleetUpgradeLauncher {
    let fleet: FleetUpgrade
    let package: FirmwarePackage
    let devices: [String: Inventory.Device]
    let events: AsyncThrowingStream<FleetEvent, any Error>.Continuation
    let inbox: AsyncStream<FleetDriver.Message>.Continuation
    let store: any RolloutStore
    let rollout: String

    /// Starts the upgrade of a record's device (its current attempt) in `group`.
    /// - Parameters:
    ///   - record: the running record.
    ///   - wrap: what the device's transport goes through (a shared rollout's lease).
    ///   - group: the driver's task group.
    /// - Returns: the run; `nil` when it could not start (its end is already in the inbox).
    func start(
        _ record: DeviceRecord,
        wrap: (any SMPTransport) -> any SMPTransport = { $0 },
        group: inout ThrowingTaskGroup<Void, any Error>
    ) -> FirmwareUpgradeRun? {
        let id = record.id
        let attempt = record.attempts
        let inbox = self.inbox
        guard let device = devices[id] else {
            let failure = AttemptFailure(code: .notInInventory, state: nil, message: "not in this worker's inventory")
            inbox.yield(.ended(id, attempt: attempt, .failed(failure)))
            return nil
        }
        let transport: any SMPTransport
        do {
            transport = wrap(try fleet.makeTransport(device))
        } catch {
            let failure = AttemptFailure(code: .transportUnavailable, state: nil, message: "\(error)")
            inbox.yield(.ended(id, attempt: attempt, .failed(failure)))
            return nil
        }
        let run = FirmwareUpgrade(
            transport: transport,
            configuration: fleet.configuration,
            clientConfiguration: fleet.clientConfiguration,
            logger: fleet.logger
        ).run(package, onSlotsRead: versionRecorder(device: id, attempt: attempt))
        let events = self.events
        group.addTask {
            let result = await Self.outcome(of: run, device: id, attempt: attempt, events: events, inbox: inbox)
            inbox.yield(.ended(id, attempt: attempt, result))
        }
        return run
    }

    /// Writes the version a device runs straight to the store, and before the upgrade sends
    /// anything that could change the device (the run waits for it). Not through the driver's
    /// loop, and not from the run's events: behind a busy loop or a busy reader of the events
    /// (a niced process, many devices) a kill -9 during the upload lost the version the device
    /// had said it ran, twice.
    private func versionRecorder(device: String, attempt: Int) -> FirmwareUpgrade.SlotsObserver {
        let store = self.store
        let rollout = self.rollout
        let worker = fleet.worker
        return { slots in
            guard let version = Self.runningVersion(slots) else { return }
            // A store that fails here fails the rollout's own next write, which reports it.
            try? await store.versionRead(rollout, device: device, attempt: attempt, worker: worker, version: version)
        }
    }

    /// Follows one upgrade to its end and classifies it.
    static func outcome(
        of run: FirmwareUpgradeRun,
        device: String,
        attempt: Int,
        events: AsyncThrowingStream<FleetEvent, any Error>.Continuation,
        inbox: AsyncStream<FleetDriver.Message>.Continuation
    ) async -> AttemptResult {
        do {
            for try await event in run {
                events.yield(.upgrade(device: device, event))
                // The store has it already (versionRecorder); this is the driver's own record.
                if case .imagesRead(let slots) = event, let version = runningVersion(slots) {
                    inbox.yield(.versionRead(device, attempt: attempt, version))
                }
                guard case .completed(let summary) = event else { continue }
                let before = runningVersion(summary.before)
                if summary.isUpToDate { return .alreadyCurrent(version: before) }
                return .upgraded(
                    versionBefore: before,
                    versionAfter: runningVersion(summary.after),
                    uploadedBytes: summary.uploadedBytes
                )
            }
            return .interrupted
        } catch let error as FirmwareUpgradeError {
            return AttemptResult(error)
        } catch {
            return .interrupted
        }
    }

    /// The version image 0 runs, from an image list.
    static func runningVersion(_ slots: [ImageManagement.SlotState]) -> String? {
        slots.first { $0.imageNumber == 0 && $0.isActive }?.version ?? slots.first { $0.isActive }?.version
    }
}
