import Foundation
import MCUboot
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPSimulator
import Testing

/// Every fault at every moment, not a random sample: for an upgrade cell (mode × bootloader ×
/// image count), a clean run counts the requests the device handles; then, for each request
/// index, a run with a power loss there, one with that request's answer lost, and one with the
/// link lost after it — plus a power loss during the swap. Each run must leave a device that
/// boots, must report success only when the promised slot state holds, and the same command run
/// again must complete the upgrade.
///
/// `swift test` runs a slice, one cell per bootloader family, a cell at a time (eight runs at
/// once): the whole matrix — about 1,700 upgrades — run in parallel with the rest of the suite
/// starved the other tests of CPU. `MCUMGR_FAULT_MATRIX=full` (scripts/fault-matrix.sh) runs
/// every cell; the counts are in docs/RELIABILITY.md.
@Suite(.serialized) struct FaultMatrixTests {
    /// An upgrade cell: mode, bootloader mode, image count (the integration tests' combination).
    typealias Cell = FirmwareUpgradeIntegrationTests.Combination

    /// What one faulted run came to.
    struct Verdict: Sendable {
        var fault: Fault
        var succeeded = false
        var bricked = false
        /// Reported success although the promised state does not hold.
        var untruthful = false
        /// The same command, run again without faults, did not complete the upgrade.
        var rerunFailed: String?
        var failure: String?
    }

    /// One cell per bootloader family, including the two that found engine defects (two images
    /// with a test mode; upload-only on DirectXIP without revert).
    static let slice: [Cell] = [
        Cell(mode: .testAndConfirm, bootloader: .swapUsingMove, images: 2),
        Cell(mode: .uploadOnly, bootloader: .directXIP, images: 1),
        Cell(mode: .testOnly, bootloader: .directXIPWithRevert, images: 2),
        Cell(mode: .confirmOnly, bootloader: .overwriteOnly, images: 1),
    ]

    static var cells: [Cell] {
        guard ProcessInfo.processInfo.environment["MCUMGR_FAULT_MATRIX"] == "full" else { return slice }
        let bootloaders: [BootloaderMode] = [
            .swapUsingMove, .swapUsingScratch, .overwriteOnly, .directXIP, .directXIPWithRevert,
        ]
        return FirmwareUpgrade.Mode.allCases.flatMap { mode in
            bootloaders.flatMap { bootloader in [1, 2].map { Cell(mode: mode, bootloader: bootloader, images: $0) } }
        }
    }

    static func device(_ cell: Cell) -> SimulatedDevice {
        UpgradeHarness.device(.init(bufferSize: 512, imageCount: cell.images, bootloaderMode: cell.bootloader))
    }

    static func images(_ cell: Cell) -> [FirmwarePackage.Image] {
        UpgradeHarness.images(count: cell.images, version: "2.0.0", size: 1500)
    }

    /// Runs the upgrade on `device` (faults already set); returns the run.
    static func upgrade(_ cell: Cell, on device: SimulatedDevice) async -> UpgradeRun {
        await UpgradeHarness.run(UpgradeHarness.loopback(device, cell.mode), images: images(cell))
    }

    /// One run with `fault`, then the checks and the re-run.
    static func run(_ cell: Cell, fault: Fault) async -> Verdict {
        var verdict = Verdict(fault: fault)
        let device = device(cell)
        let images = images(cell)
        let promise = Promise(mode: cell.mode, bootloader: cell.bootloader)
        await device.setFaults(Faults([fault]))
        let faulted = await upgrade(cell, on: device)
        await device.setFaults(.none)
        await device.waitUntilAnswering()
        if faulted.error == nil {
            verdict.succeeded = true
            verdict.untruthful = !promise.isKept(by: await device.imageStates, images: images)
        } else {
            verdict.failure =
                faulted.upgradeError.map { "\($0.code) while \($0.state)" } ?? String(describing: faulted.error)
        }
        // The same command again, on the device as the fault left it.
        let again = await upgrade(cell, on: device)
        await device.waitUntilAnswering()
        if let error = again.error {
            verdict.rerunFailed = "\(error)"
        } else if !promise.isKept(by: await device.imageStates, images: images) {
            verdict.rerunFailed = "succeeded, but the device shows \(await device.imageStates)"
        }
        // Power off and on: something valid must boot.
        await device.reset()
        verdict.bricked = !(await device.isRunning)
        return verdict
    }

    @Test(.timeLimit(.minutes(20)), arguments: cells)
    func everyFaultAtEveryRequestLeavesABootableDeviceAndATruthfulReport(_ cell: Cell) async throws {
        // A clean run: the promise holds, and it tells how many requests there are to fault.
        let clean = Self.device(cell)
        let baseline = await Self.upgrade(cell, on: clean)
        #expect(baseline.error == nil, "\(String(describing: baseline.error))")
        let requests = await clean.requestsHandled
        try #require(requests > 5)
        var faults: [Fault] = [.powerLoss(.duringSwap)]
        for index in 1...requests {
            faults += [.powerLoss(.atRequest(index)), .loseAnswer(toRequest: index), .linkLoss(atRequest: index)]
        }
        let verdicts = await withTaskGroup(of: Verdict.self) { group in
            var verdicts: [Verdict] = []
            var pending = faults[...]
            for fault in pending.prefix(8) { group.addTask { await Self.run(cell, fault: fault) } }
            pending = pending.dropFirst(8)
            for await verdict in group {
                verdicts.append(verdict)
                if let next = pending.popFirst() { group.addTask { await Self.run(cell, fault: next) } }
            }
            return verdicts
        }
        let succeeded = verdicts.filter(\.succeeded).count
        let bricked = verdicts.filter(\.bricked)
        let untruthful = verdicts.filter(\.untruthful)
        let rerunFailed = verdicts.filter { $0.rerunFailed != nil }
        print(
            "fault matrix: \(cell.testDescription): \(requests) requests, \(verdicts.count) runs — "
                + "succeeded \(succeeded), failed \(verdicts.count - succeeded), bricked \(bricked.count), "
                + "untruthful \(untruthful.count), re-run failed \(rerunFailed.count)"
        )
        for verdict in bricked { Issue.record("bricked by \(verdict.fault)") }
        for verdict in untruthful { Issue.record("reported success after \(verdict.fault), promise not kept") }
        for verdict in rerunFailed {
            Issue.record(
                "after \(verdict.fault) (\(verdict.failure ?? "succeeded")), the re-run: \(verdict.rerunFailed ?? "")"
            )
        }
    }
}
