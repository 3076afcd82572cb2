import Foundation
import MCUmgrDFU
import MCUmgrFleet
import Testing

@Suite struct RolloutStateMachineTests {
    typealias Machine = RolloutStateMachine
    typealias Action = RolloutStateMachine.Action
    typealias Line = (input: RolloutStateMachine.Input, at: Double, actions: [Action])

    static let t0 = Date(timeIntervalSince1970: 1_000_000)
    static let linkDown = AttemptFailure(code: .linkFailed, state: .requestingParameters, message: "no answer")
    static let droppedMidUpload = AttemptFailure(code: .linkFailed, state: .uploading, message: "gone")
    static let refused = AttemptFailure(code: .deviceRejected, state: .uploading, message: "NO_FREE_SLOT")
    static let upgraded = AttemptResult.upgraded(versionBefore: "1.0.0", versionAfter: "1.1.0", uploadedBytes: 100)

    static func records(_ count: Int, url: (Int) -> String = { "udp://10.0.0.\($0 + 1):1337" }) -> [DeviceRecord] {
        (0..<count).map { DeviceRecord(id: "d\($0)", url: url($0), position: $0) }
    }

    static func machine(_ count: Int, _ policy: RolloutPolicy) -> Machine {
        Machine(records: records(count), policy: policy, worker: "host-a")
    }

    static func start(_ index: Int, _ phase: RolloutPhase, attempt: Int = 1) -> Action {
        .start(device: "d\(index)", attempt: attempt, phase: phase)
    }

    static func at(_ seconds: Double) -> Date { t0.addingTimeInterval(seconds) }

    /// Feeds the script, checking each answer; the finish action is compared by its statuses.
    static func run(_ machine: inout Machine, _ script: [Line], sourceLocation: SourceLocation = #_sourceLocation) {
        for (number, line) in script.enumerated() {
            let actions = machine.handle(line.input, at: at(line.at)).map(Self.withoutOutcome)
            #expect(actions == line.actions.map(Self.withoutOutcome), "line \(number)", sourceLocation: sourceLocation)
        }
    }

    /// `.finish` compared without its records (statuses are checked separately).
    static func withoutOutcome(_ action: Action) -> Action {
        guard case .finish(let outcome) = action else { return action }
        return .finish(RolloutOutcome(records: [], halt: outcome.halt, interrupted: outcome.interrupted))
    }

    static let finished = Action.finish(RolloutOutcome(records: [], halt: nil, interrupted: false))

    static func statuses(_ machine: Machine) -> [DeviceRecord.Status] { machine.records.map(\.status) }

    @Test func aCanaryFailureHaltsAndEveryOtherDeviceIsSkipped() {
        var machine = Self.machine(5, RolloutPolicy(canary: 1, parallel: 4))
        let halt = RolloutGates.HaltReason.canaryFailed(device: "d0")
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.canary), Self.start(0, .canary)]),
                (
                    .ended(device: "d0", .failed(Self.refused)), 5,
                    [
                        .halt(halt), .finish(RolloutOutcome(records: [], halt: halt, interrupted: false)),
                    ]
                ),
            ]
        )
        #expect(Self.statuses(machine) == [.failed, .skipped, .skipped, .skipped, .skipped])
        #expect(machine.records[0].failure == Self.refused)
    }

    @Test func theCanaryGoesAloneThenEachWaveWaitsForTheOneBefore() {
        // 10 devices, waves 20 %, 50 %, 100 %: ends at 2, 5 and 10 devices.
        let waves: [RolloutPolicy.Share] = [.percent(20), .percent(50), .percent(100)]
        var machine = Self.machine(10, RolloutPolicy(canary: 1, waves: waves, parallel: 10))
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.canary), Self.start(0, .canary)]),
                (.ended(device: "d0", Self.upgraded), 1, [.enterPhase(.wave(0)), Self.start(1, .wave(0))]),
                (
                    .ended(device: "d1", Self.upgraded), 2,
                    [
                        .enterPhase(.wave(1)), Self.start(2, .wave(1)), Self.start(3, .wave(1)),
                        Self.start(4, .wave(1)),
                    ]
                ),
                (.ended(device: "d2", Self.upgraded), 3, []),
                (.ended(device: "d4", .alreadyCurrent(version: "1.1.0")), 3, []),
                (
                    .ended(device: "d3", Self.upgraded), 4,
                    [.enterPhase(.wave(2))] + (5..<10).map { Self.start($0, .wave(2)) }
                ),
            ] + (5..<9).map { (.ended(device: "d\($0)", Self.upgraded), 5, []) } + [
                (.ended(device: "d9", Self.upgraded), 6, [Self.finished])
            ]
        )
        #expect(
            Self.statuses(machine) == [.upgraded, .upgraded, .upgraded, .upgraded, .alreadyCurrent]
                + Array(repeating: .upgraded, count: 5)
        )
    }

    @Test func anExceededBudgetStopsNewStartsButLetsInFlightUpgradesFinish() {
        var machine = Self.machine(6, RolloutPolicy(maxFailures: .count(0), parallel: 2))
        let halt = RolloutGates.HaltReason.budgetExceeded(failures: 1, limit: 0)
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.wave(0)), Self.start(0, .wave(0)), Self.start(1, .wave(0))]),
                (.ended(device: "d0", .failed(Self.refused)), 1, [.halt(halt)]),
                (
                    .ended(device: "d1", Self.upgraded), 9,
                    [.finish(RolloutOutcome(records: [], halt: halt, interrupted: false))]
                ),
            ]
        )
        #expect(Self.statuses(machine) == [.failed, .upgraded, .skipped, .skipped, .skipped, .skipped])
        #expect(machine.records[2].failure?.message.contains("halted") == true)
    }

    @Test func aWaveDoesNotStartWhenTheOneBeforeEndedOverBudget() {
        let policy = RolloutPolicy(waves: [.percent(50), .percent(100)], maxFailures: .percent(25), parallel: 4)
        var machine = Self.machine(4, policy)  // 25 % of 4: one failure tolerated
        let halt = RolloutGates.HaltReason.budgetExceeded(failures: 2, limit: 1)
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.wave(0)), Self.start(0, .wave(0)), Self.start(1, .wave(0))]),
                (.ended(device: "d0", .failed(Self.refused)), 1, []),
                (
                    .ended(device: "d1", .failed(Self.refused)), 2,
                    [
                        .halt(halt), .finish(RolloutOutcome(records: [], halt: halt, interrupted: false)),
                    ]
                ),
            ]
        )
        #expect(Self.statuses(machine) == [.failed, .failed, .skipped, .skipped])
    }

    @Test func alreadyCurrentDevicesAreSkippedAndDoNotCountAsTheCanary() {
        var machine = Self.machine(3, RolloutPolicy(canary: 1, parallel: 3))
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.canary), Self.start(0, .canary)]),
                (.ended(device: "d0", .alreadyCurrent(version: "1.1.0")), 1, [Self.start(1, .canary)]),
                (.ended(device: "d1", Self.upgraded), 2, [.enterPhase(.wave(0)), Self.start(2, .wave(0))]),
                (.ended(device: "d2", .alreadyCurrent(version: "1.1.0")), 3, [Self.finished]),
            ]
        )
        #expect(Self.statuses(machine) == [.alreadyCurrent, .upgraded, .alreadyCurrent])
        #expect(machine.records[0].attempts == 1 && machine.records[0].uploadedBytes == 0)
    }

    @Test func linkFailuresAreRetriedWithBackOffThenTheDeviceIsUnreachable() {
        let policy = RolloutPolicy(parallel: 1, linkRetries: 2, backoff: .seconds(2))
        var machine = Self.machine(1, policy)
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.wave(0)), Self.start(0, .wave(0))]),
                (
                    .ended(device: "d0", .linkFailed(Self.linkDown, reached: false)), 10,
                    [
                        .retry(device: "d0", at: Self.at(12), Self.linkDown)
                    ]
                ),
                (.wake, 11, []),
                (.wake, 12, [Self.start(0, .wave(0), attempt: 2)]),
                (
                    .ended(device: "d0", .linkFailed(Self.linkDown, reached: false)), 13,
                    [
                        .retry(device: "d0", at: Self.at(17), Self.linkDown)
                    ]
                ),
                (.wake, 17, [Self.start(0, .wave(0), attempt: 3)]),
                (.ended(device: "d0", .linkFailed(Self.linkDown, reached: false)), 18, [Self.finished]),
            ]
        )
        #expect(Self.statuses(machine) == [.unreachable])
        #expect(machine.records[0].attempts == 3)
    }

    @Test(arguments: [
        AttemptResult.failed(refused), .linkFailed(droppedMidUpload, reached: true),
    ])
    func refusalsAreNeverRetriedAndALinkLostAfterAnAnswerEndsFailed(_ result: AttemptResult) {
        var machine = Self.machine(1, RolloutPolicy(linkRetries: 0))
        _ = machine.handle(.start, at: Self.at(0))
        let actions = machine.handle(.ended(device: "d0", result), at: Self.at(1)).map(Self.withoutOutcome)
        #expect(actions == [Self.finished])
        #expect(Self.statuses(machine) == [.failed])
    }

    @Test func aRetryWaitingWhenTheRolloutHaltsEndsWithItsLastFailure() {
        var machine = Self.machine(2, RolloutPolicy(maxFailures: .count(0), parallel: 2, linkRetries: 3))
        _ = machine.handle(.start, at: Self.at(0))
        _ = machine.handle(.ended(device: "d0", .linkFailed(Self.droppedMidUpload, reached: true)), at: Self.at(1))
        let actions = machine.handle(.ended(device: "d1", .failed(Self.refused)), at: Self.at(2))
        #expect(actions.count == 2)
        #expect(Self.statuses(machine) == [.failed, .failed])
        #expect(machine.records[0].failure == Self.droppedMidUpload)
    }

    @Test func oneUpgradePerSerialPortAndAdapterLimitsForBluetooth() {
        let urls = [
            "serial:///dev/ttyACM0", "serial:///dev/ttyACM0", "serial:///dev/ttyACM1", "ble://a?adapter=hci0",
            "ble://b?adapter=hci0", "ble://c?adapter=hci1", "udp://10.0.0.1:1337",
        ]
        let records = Self.records(urls.count) { urls[$0] }
        var machine = Machine(records: records, policy: RolloutPolicy(parallel: 10), worker: "h")
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.wave(0))] + [0, 2, 3, 5, 6].map { Self.start($0, .wave(0)) }),
                (.ended(device: "d0", Self.upgraded), 1, [Self.start(1, .wave(0))]),
                (.ended(device: "d3", Self.upgraded), 1, [Self.start(4, .wave(0))]),
            ]
        )
    }

    @Test func parallelLimitsUpgradesAtOnce() {
        var machine = Self.machine(3, RolloutPolicy(parallel: 2))
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.wave(0)), Self.start(0, .wave(0)), Self.start(1, .wave(0))]),
                (.ended(device: "d1", Self.upgraded), 1, [Self.start(2, .wave(0))]),
            ]
        )
    }

    @Test func anInterruptionStartsNothingAndLeavesDevicesInFlightPending() {
        var machine = Self.machine(4, RolloutPolicy(parallel: 2))
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.wave(0)), Self.start(0, .wave(0)), Self.start(1, .wave(0))]),
                (.interrupt, 1, []),
                (.ended(device: "d0", Self.upgraded), 2, []),
                (
                    .ended(device: "d1", .interrupted), 2,
                    [.finish(RolloutOutcome(records: [], halt: nil, interrupted: true))]
                ),
            ]
        )
        #expect(Self.statuses(machine) == [.upgraded, .pending, .pending, .pending])
    }

    @Test func aResumedRolloutTouchesNoEndedDeviceAndPlansCaughtOnesAgain() {
        var records = Self.records(4)
        records[0].status = .upgraded
        records[1].status = .running  // caught by a crash
        records[1].attempts = 1
        records[2].status = .failed
        records[3].status = .alreadyCurrent
        var machine = Machine(records: records, policy: RolloutPolicy(), worker: "h")
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.wave(0)), Self.start(1, .wave(0), attempt: 2)]),
                (.ended(device: "d1", Self.upgraded), 1, [Self.finished]),
            ]
        )
        #expect(Self.statuses(machine) == [.upgraded, .upgraded, .failed, .alreadyCurrent])
    }

    /// The outcome tells what this run saw from what it only shows: devices it started, devices
    /// that had ended before it began, devices nobody contacted (another host's, a halt's).
    @Test func theOutcomeSaysWhichDevicesThisRunStartedAndWhichEndedBefore() throws {
        var records = Self.records(4)
        records[0].status = .upgraded
        records[0].attempts = 1
        records[3].labels["host"] = "gw2"
        var machine = Machine(records: records, policy: RolloutPolicy(), worker: "gw1")
        _ = machine.handle(.start, at: Self.at(0))
        _ = machine.handle(.ended(device: "d1", Self.upgraded), at: Self.at(1))
        let actions = machine.handle(.ended(device: "d2", .failed(Self.refused)), at: Self.at(2))
        guard case .finish(let outcome) = actions.last else {
            Issue.record("the rollout did not finish: \(actions)")
            return
        }
        #expect(outcome.started == ["d1", "d2"] && outcome.endedBefore == ["d0"])
        #expect(outcome.records.map { outcome.source(of: $0) } == [.earlierRun, .thisRun, .thisRun, .notContacted])
        #expect(outcome.sources == [.earlierRun: 1, .thisRun: 2, .notContacted: 1])
    }

    /// With a shared store, a device another worker ran is that worker's in the outcome, even one
    /// this worker started first and lost; a device skipped by a halt was contacted by nobody.
    @Test func aSharedOutcomeNamesTheDevicesOfOtherWorkers() {
        var records = Self.records(4)
        for index in 0..<3 {
            records[index].status = .upgraded
            records[index].attempts = 1
            records[index].worker = index == 0 ? "gw1" : "gw2"
        }
        records[3].status = .skipped
        records[3].worker = "gw2"
        let outcome = RolloutOutcome(
            records: records,
            halt: nil,
            interrupted: false,
            started: ["d0", "d1"],
            worker: "gw1"
        )
        #expect(
            records.map { outcome.source(of: $0) } == [.thisRun, .anotherWorker, .anotherWorker, .notContacted]
        )
    }

    /// Three workers start together, but one is slow to begin (a busy machine, `nice`): the
    /// devices a sibling ended before it loaded the rollout are the sibling's, not an earlier
    /// run's; only a device ended under its own name before it began is.
    @Test func aWorkerThatJoinsLateNamesTheSiblingThatEndedADevice() {
        var records = Self.records(3)
        for index in 0..<3 {
            records[index].status = .upgraded
            records[index].attempts = 1
        }
        records[0].worker = "gw1"
        records[1].worker = "gw2"
        records[2].worker = "gw2"
        let outcome = RolloutOutcome(
            records: records,
            halt: nil,
            interrupted: false,
            started: ["d2"],
            endedBefore: ["d0", "d1"],
            worker: "gw2"
        )
        #expect(records.map { outcome.source(of: $0) } == [.anotherWorker, .earlierRun, .thisRun])
    }

    @Test func devicesTiedToAnotherHostAreSkippedHere() {
        var records = Self.records(2)
        records[1].labels["host"] = "gw2,gw3"
        var machine = Machine(records: records, policy: RolloutPolicy(), worker: "gw1")
        Self.run(
            &machine,
            [
                (.start, 0, [.enterPhase(.wave(0)), Self.start(0, .wave(0))]),
                (.ended(device: "d0", Self.upgraded), 1, [Self.finished]),
            ]
        )
        #expect(Self.statuses(machine) == [.upgraded, .skipped])
        #expect(machine.records[1].failure?.message.contains("gw2,gw3") == true)
    }

    /// Random outcomes under random policies: the rollout always finishes, and every device ends
    /// in exactly one final state, never started again once ended.
    @Test(arguments: 1...40)
    func everyDeviceEndsInExactlyOneFinalState(seed: Int) throws {
        var random = SplitMix(seed: UInt64(seed))
        let count = Int(random.next() % 30) + 1
        let policy = RolloutPolicy(
            canary: Int(random.next() % 3),
            waves: [[.percent(100)], [.percent(10), .percent(50), .percent(100)], [.count(3), .percent(100)]][
                Int(random.next() % 3)
            ],
            maxFailures: [nil, .count(2), .percent(20)][Int(random.next() % 3)],
            parallel: Int(random.next() % 5) + 1,
            linkRetries: Int(random.next() % 3)
        )
        var machine = Self.machine(count, policy)
        var running: [String] = []
        var ended: Set<String> = []
        var time = 0.0
        var actions = machine.handle(.start, at: Self.at(time))
        var finished: RolloutOutcome?
        for _ in 0..<10_000 {
            for action in actions {
                switch action {
                case .start(let device, _, _):
                    #expect(!ended.contains(device), "\(device) started after it ended")
                    running.append(device)
                case .finish(let outcome): finished = outcome
                default: break
                }
            }
            if finished != nil { break }
            time += 1
            guard !running.isEmpty else {
                actions = machine.handle(.wake, at: Self.at(time + 120))
                time += 120
                continue
            }
            let device = running.remove(at: Int(random.next() % UInt64(running.count)))
            let results: [AttemptResult] = [
                Self.upgraded, Self.upgraded, Self.upgraded, .alreadyCurrent(version: "1.1.0"), .failed(Self.refused),
                .linkFailed(Self.linkDown, reached: false), .linkFailed(Self.droppedMidUpload, reached: true),
            ]
            actions = machine.handle(.ended(device: device, results[Int(random.next() % 7)]), at: Self.at(time))
            if let status = machine.record(device)?.status, status.isFinal { ended.insert(device) }
        }
        let outcome = try #require(finished)
        #expect(outcome.records.count == count)
        #expect(outcome.records.allSatisfy { $0.status.isFinal })
        #expect(outcome.counts.values.reduce(0, +) == count)
    }

    /// What a device ran is recorded when it says so, before its attempt ends: an interruption
    /// keeps it, and a resumed attempt that finds the new image already running (the first one
    /// got there) reports the first reading, not `?` or the new version.
    @Test func theVersionBeforeIsTheFirstReadingAndOutlivesAnInterruption() throws {
        var machine = Self.machine(1, RolloutPolicy())
        #expect(machine.handle(.start, at: Self.at(0)).contains(Self.start(0, .wave(0))))
        _ = machine.handle(.versionRead(device: "d0", "1.0.0"), at: Self.at(1))
        #expect(machine.records[0].versionBefore == "1.0.0")
        _ = machine.handle(.interrupt, at: Self.at(2))
        _ = machine.handle(.ended(device: "d0", .interrupted), at: Self.at(3))
        #expect(machine.records[0].status == .pending && machine.records[0].versionBefore == "1.0.0")

        var resumed = Machine(records: machine.records, policy: RolloutPolicy(), worker: "host-a")
        #expect(resumed.handle(.start, at: Self.at(10)).contains(Self.start(0, .wave(0), attempt: 2)))
        _ = resumed.handle(.versionRead(device: "d0", "1.1.0"), at: Self.at(11))
        _ = resumed.handle(.ended(device: "d0", .alreadyCurrent(version: "1.1.0")), at: Self.at(12))
        let record = resumed.records[0]
        #expect(record.status == .upgraded, "\(record)")
        #expect(record.versionBefore == "1.0.0" && record.versionAfter == "1.1.0", "\(record)")
    }

    /// A reading for a device that is not running changes nothing.
    @Test func aVersionReadForADeviceNotRunningIsIgnored() {
        var machine = Self.machine(2, RolloutPolicy(parallel: 1))
        _ = machine.handle(.start, at: Self.at(0))
        _ = machine.handle(.versionRead(device: "d1", "0.9.0"), at: Self.at(1))
        #expect(machine.records[1].versionBefore == nil)
    }
}

/// SplitMix64, for seeded tables.
struct SplitMix {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

}
