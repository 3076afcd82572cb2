import Foundation
import SMPCore
import SMPLink
import Testing

@testable import MCUmgr

/// The upload engine's decisions, event by event, as tables: every policy of
/// `UploadStateMachine` (back-pressure, lost answers, silence, restarts, resynchronisation, the
/// device's verdict, pause and resume) without a client, a clock or a device.
struct UploadStateMachineTests {
    /// One event fed to the machine, at a time in milliseconds.
    enum Event: CustomStringConvertible {
        case start
        case opened(offset: Int, size: Int)
        /// The driver sends what `nextChunk()` gives, `size` bytes each, while the window has room.
        case fill(size: Int)
        case answer(start: Int, offset: Int, roundTrip: Int = 2)
        case refuse(start: Int, UploadStateMachine.Refusal)
        case timeout(start: Int)
        case failure(start: Int, cancelled: Bool)
        case completion(Bool)
        case pause
        case resume

        var description: String {
            switch self {
            case .start: "start"
            case .opened(let offset, let size): "opening answered \(offset) (sent \(size))"
            case .fill(let size): "fill (\(size))"
            case .answer(let start, let offset, _): "answer \(start) → \(offset)"
            case .refuse(let start, let refusal): "\(refusal) at \(start)"
            case .timeout(let start): "no answer at \(start)"
            case .failure(let start, let cancelled): "failure at \(start)\(cancelled ? " (cancelled)" : "")"
            case .completion(let holds): "completion \(holds)"
            case .pause: "pause"
            case .resume: "resume"
            }
        }
    }

    /// What an action says, reduced to what a policy decides.
    struct Outcome: Equatable, CustomStringConvertible {
        var kind: Kind
        var withdraw: [Int] = []
        var pause: Duration = .zero
        var windows: [Int] = []
        var restarted = false
        var resumed: Int?
        var failure: String?

        enum Kind: String { case open, stream, pause, check, finish, fail }

        var description: String {
            var parts = [kind.rawValue]
            if !withdraw.isEmpty { parts.append("withdraw \(withdraw)") }
            if pause > .zero { parts.append("pause \(pause)") }
            if !windows.isEmpty { parts.append("window → \(windows)") }
            if restarted { parts.append("restarted") }
            if let resumed { parts.append("resumed at \(resumed)") }
            if let failure { parts.append("failure \(failure)") }
            return parts.joined(separator: ", ")
        }

        init(
            _ kind: Kind,
            withdraw: [Int] = [],
            pause: Duration = .zero,
            windows: [Int] = [],
            restarted: Bool = false,
            resumed: Int? = nil,
            failure: String? = nil
        ) {
            self.kind = kind
            self.withdraw = withdraw
            self.pause = pause
            self.windows = windows
            self.restarted = restarted
            self.resumed = resumed
            self.failure = failure
        }

        init(_ action: UploadStateMachine.Action) {
            let report: UploadStateMachine.Report
            switch action {
            case .openSession(let r): (kind, report) = (.open, r)
            case .stream(let r): (kind, report) = (.stream, r)
            case .pause(let r): (kind, report) = (.pause, r)
            case .checkCompletion(let r): (kind, report) = (.check, r)
            case .finish(let r): (kind, report) = (.finish, r)
            case .fail(let r, let failure):
                (kind, report) = (.fail, r)
                switch failure {
                case .transfer(let error): self.failure = "\(error.code)"
                case .silent(let error): self.failure = "\(error.code)"
                case .chunkError: self.failure = "chunk error"
                }
            }
            withdraw = report.withdraw.sorted()
            pause = report.pause
            for event in report.events {
                switch event {
                case .windowChanged(let change): windows.append(change.to)
                case .restarted: restarted = true
                case .resumed(let offset): resumed = offset
                case .progress: break
                }
            }
        }
    }

    struct Step {
        var at: Int
        var event: Event
        var expect: Outcome?
        /// For `.fill`: the chunk starts the driver is given.
        var sends: [Int]?

        static func at(_ time: Int, _ event: Event, _ expect: Outcome) -> Step {
            Step(at: time, event: event, expect: expect)
        }
        static func fill(_ time: Int = 0, size: Int = 100, sends: [Int]) -> Step {
            Step(at: time, event: .fill(size: size), sends: sends)
        }
    }

    static func machine(total: Int = 1000, window: Int = 3, ceiling: Int? = nil, restarts: Int = 2)
        -> UploadStateMachine
    {
        UploadStateMachine(
            configuration: .init(
                total: total,
                maximumRestarts: restarts,
                silenceLimit: .milliseconds(400),
                chunkTimeout: .milliseconds(100),
                busyBackoff: .milliseconds(50)
            ),
            window: AdaptiveWindow(initial: window, ceiling: ceiling ?? window)
        )
    }

    /// Feeds the steps; checks every outcome and every fill.
    static func run(
        _ steps: [Step],
        on machine: inout UploadStateMachine,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        for (index, step) in steps.enumerated() {
            let now = Duration.milliseconds(step.at)
            let action: UploadStateMachine.Action
            switch step.event {
            case .fill(let size):
                var sent: [Int] = []
                while let start = machine.nextChunk() {
                    machine.chunkSent(start: start, size: min(size, machine.configuration.total - start))
                    sent.append(start)
                }
                #expect(sent == step.sends, "step \(index): \(step.event)", sourceLocation: sourceLocation)
                continue
            case .start: action = machine.start()
            case .opened(let offset, let size):
                action = machine.openingAnswered(deviceOffset: offset, openingSize: size, now: now)
            case .answer(let start, let offset, let roundTrip):
                action = machine.chunkAnswered(
                    start: start,
                    deviceOffset: offset,
                    roundTrip: .milliseconds(roundTrip),
                    now: now
                )
            case .refuse(let start, let refusal): action = machine.chunkRefused(start: start, refusal, now: now)
            case .timeout(let start): action = machine.chunkTimedOut(start: start, now: now)
            case .failure(let start, let cancelled): action = machine.chunkFailed(start: start, cancelled: cancelled)
            case .completion(let holds): action = machine.completionChecked(deviceHoldsUpload: holds, now: now)
            case .pause: action = machine.pause(now: now)
            case .resume: action = machine.resume(now: now)
            }
            if let expected = step.expect {
                #expect(Outcome(action) == expected, "step \(index): \(step.event)", sourceLocation: sourceLocation)
            }
        }
    }

    /// A named scenario: steps, and the window it must end with.
    struct Scenario: CustomTestStringConvertible, Sendable {
        var name: String
        var window = 3
        var ceiling: Int?
        var restarts = 2
        var steps: @Sendable () -> [Step]
        var finalWindow: Int?
        var testDescription: String { name }
    }

    /// The session opens at 100 (a 100-byte opening chunk) and three chunks go out.
    static let opened: [Step] = [
        .at(0, .start, Outcome(.open)),
        .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
        .fill(sends: [100, 200, 300]),
    ]

    static let scenarios: [Scenario] = [
        Scenario(
            name: "answers in order keep the window full and finish at the last byte",
            window: 3,
            steps: {
                opened + [
                    .at(10, .answer(start: 100, offset: 200), Outcome(.stream)), .fill(sends: [400]),
                    .at(11, .answer(start: 200, offset: 300), Outcome(.stream)), .fill(sends: [500]),
                    .at(12, .answer(start: 300, offset: 400), Outcome(.stream)), .fill(sends: [600]),
                    .at(13, .answer(start: 400, offset: 500), Outcome(.stream)), .fill(sends: [700]),
                    .at(14, .answer(start: 500, offset: 600), Outcome(.stream)), .fill(sends: [800]),
                    .at(15, .answer(start: 600, offset: 700), Outcome(.stream)), .fill(sends: [900]),
                    .at(16, .answer(start: 700, offset: 800), Outcome(.stream)), .fill(sends: []),
                    .at(17, .answer(start: 800, offset: 900), Outcome(.stream)), .fill(sends: []),
                    .at(18, .answer(start: 900, offset: 1000), Outcome(.finish)),
                ]
            }
        ),
        Scenario(
            name: "ENOMEM halves the window, abandons the refused chunk and what follows, pauses for them",
            window: 4,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100, 200, 300, 400]),
                    // A 2 ms round trip (the smoothed start): three abandoned behind the first → 2 × 2 ms.
                    .at(
                        5,
                        .refuse(start: 200, .outOfBuffers),
                        Outcome(.stream, withdraw: [200, 300, 400], pause: .milliseconds(4), windows: [2])
                    ),
                    .fill(sends: [200]),
                    .at(6, .answer(start: 100, offset: 200), Outcome(.stream)), .fill(sends: [300]),
                ]
            },
            finalWindow: 2
        ),
        Scenario(
            name: "EBUSY adds the busy back-off to the pause",
            window: 2,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100, 200]),
                    .at(
                        5,
                        .refuse(start: 100, .busy),
                        Outcome(.stream, withdraw: [100, 200], pause: .milliseconds(52), windows: [1])
                    ),
                    .fill(sends: [100]),
                ]
            },
            finalWindow: 1
        ),
        Scenario(
            name: "ENOMEM at window 1 waits a smoothed round trip before the next try",
            window: 1,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100]),
                    // Round trip 2 ms → (2 × 7 + 10) / 8 = 3 ms smoothed.
                    .at(10, .answer(start: 100, offset: 200, roundTrip: 10), Outcome(.stream)), .fill(sends: [200]),
                    .at(
                        20,
                        .refuse(start: 200, .outOfBuffers),
                        Outcome(.stream, withdraw: [200], pause: .milliseconds(3))
                    ),
                    .fill(sends: [200]),
                    // EBUSY at window 1: the busy back-off, as before.
                    .at(30, .refuse(start: 200, .busy), Outcome(.stream, withdraw: [200], pause: .milliseconds(50))),
                ]
            },
            finalWindow: 1
        ),
        Scenario(
            name: "a lost answer is back-pressure: halve, send again from the chunk",
            window: 4,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100, 200, 300, 400]),
                    .at(
                        100,
                        .timeout(start: 100),
                        Outcome(.stream, withdraw: [100, 200, 300, 400], pause: .milliseconds(6), windows: [2])
                    ),
                    .fill(sends: [100, 200]),
                    .at(110, .answer(start: 100, offset: 200), Outcome(.stream)), .fill(sends: [300]),
                ]
            },
            finalWindow: 2
        ),
        Scenario(
            name: "silence for the silence limit fails the upload",
            window: 1,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100]),
                    .at(100, .timeout(start: 100), Outcome(.stream, withdraw: [100])), .fill(sends: [100]),
                    .at(300, .timeout(start: 100), Outcome(.stream, withdraw: [100])), .fill(sends: [100]),
                    .at(400, .timeout(start: 100), Outcome(.fail, failure: "timed out")),
                ]
            }
        ),
        Scenario(
            name: "the device restarts its offset mid-transfer: the session is opened again",
            window: 2,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100, 200]),
                    .at(5, .answer(start: 100, offset: 200), Outcome(.stream)), .fill(sends: [300]),
                    .at(6, .answer(start: 200, offset: 0), Outcome(.open, withdraw: [300], restarted: true)),
                    .at(7, .opened(offset: 100, size: 100), Outcome(.stream)), .fill(sends: [100, 200]),
                    .at(8, .answer(start: 100, offset: 0), Outcome(.open, withdraw: [200], restarted: true)),
                    .at(9, .opened(offset: 100, size: 100), Outcome(.stream)), .fill(sends: [100, 200]),
                    // The third time is over the limit of 2.
                    .at(
                        10,
                        .answer(start: 100, offset: 0),
                        Outcome(.fail, withdraw: [200], failure: "upload session lost")
                    ),
                ]
            }
        ),
        Scenario(
            name: "offset 0 after every byte was sent: ask whether the device holds the upload",
            window: 1,
            steps: {
                [
                    .at(0, .start, Outcome(.open)),
                    .at(0, .opened(offset: 800, size: 100), Outcome(.stream, resumed: 800)),
                    .fill(size: 200, sends: [800]),
                    .at(5, .answer(start: 800, offset: 0), Outcome(.check)),
                    .at(6, .completion(true), Outcome(.finish)),
                ]
            }
        ),
        Scenario(
            name: "offset 0 after every byte was sent, and the device does not hold it: reopen",
            window: 1,
            steps: {
                [
                    .at(0, .start, Outcome(.open)),
                    .at(0, .opened(offset: 800, size: 100), Outcome(.stream, resumed: 800)),
                    .fill(size: 200, sends: [800]),
                    .at(5, .answer(start: 800, offset: 0), Outcome(.check)),
                    .at(6, .completion(false), Outcome(.open, restarted: true)),
                ]
            }
        ),
        Scenario(
            name: "the device keeps nothing of the opening chunk: reopen, then fail as stalled",
            restarts: 1,
            steps: {
                [
                    .at(0, .start, Outcome(.open)),
                    .at(1, .opened(offset: 0, size: 100), Outcome(.open, restarted: true)),
                    .at(2, .opened(offset: 0, size: 100), Outcome(.fail, failure: "transfer stalled")),
                ]
            }
        ),
        Scenario(
            name: "a device that answers without advancing past 2 × window + 8 answers is reopened",
            window: 1,
            restarts: 1,
            steps: {
                var steps: [Step] = [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100]),
                    .at(1, .answer(start: 100, offset: 200), Outcome(.stream)), .fill(sends: [200]),
                ]
                // It keeps asking for 200 without taking it: each answer sends it again, ten times
                // (the limit at window 1)...
                for time in 2...11 {
                    steps.append(.at(time, .answer(start: 200, offset: 200), Outcome(.stream)))
                    steps.append(.fill(sends: [200]))
                }
                // ...and the eleventh reopens the session, whose answer is the device's own offset.
                steps.append(.at(12, .answer(start: 200, offset: 200), Outcome(.open, restarted: true)))
                return steps
            }
        ),
        Scenario(
            name: "a later offset covers a lost answer; an earlier one resynchronises the pipeline",
            window: 4,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100, 200, 300, 400]),
                    .at(5, .answer(start: 200, offset: 300), Outcome(.stream, withdraw: [100])),
                    .fill(sends: [500, 600]),
                    // The device lost 300..<400: the answer to 400 asks for 300 again.
                    .at(6, .answer(start: 400, offset: 300), Outcome(.stream, withdraw: [300, 500, 600])),
                    .fill(sends: [300, 400, 500, 600]),
                ]
            },
            finalWindow: 4
        ),
        Scenario(
            name: "answers that move the upload grow the window back, never to a size that ran out of buffers",
            window: 4,
            ceiling: 4,
            steps: {
                var steps: [Step] = [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100, 200, 300, 400]),
                    .at(
                        1,
                        .refuse(start: 100, .outOfBuffers),
                        Outcome(.stream, withdraw: [100, 200, 300, 400], pause: .milliseconds(6), windows: [2])
                    ),
                    .fill(sends: [100, 200]),
                    .at(2, .answer(start: 100, offset: 200), Outcome(.stream)), .fill(sends: [300]),
                    .at(3, .answer(start: 200, offset: 300), Outcome(.stream, windows: [3])), .fill(sends: [400, 500]),
                ]
                var offset = 300
                for time in 4...9 {
                    steps.append(.at(time, .answer(start: offset, offset: offset + 100), Outcome(.stream)))
                    offset += 100
                    steps.append(.fill(sends: offset + 200 < 1000 ? [offset + 200] : []))
                }
                return steps
            },
            finalWindow: 3
        ),
        Scenario(
            name: "a pause stops sending after the chunks in flight; a resume reopens the session",
            window: 2,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100, 200]),
                    .at(1, .pause, Outcome(.stream)), .fill(sends: []),
                    .at(2, .answer(start: 100, offset: 200), Outcome(.stream)), .fill(sends: []),
                    .at(3, .answer(start: 200, offset: 300), Outcome(.pause)),
                    .at(50, .resume, Outcome(.open)),
                    // The device's offset is where the upload stopped: not an interrupted upload, no
                    // restart counted.
                    .at(51, .opened(offset: 300, size: 100), Outcome(.stream)), .fill(sends: [300, 400]),
                ]
            }
        ),
        Scenario(
            name: "a pause with nothing in flight takes effect at once; one called off before it does is gone",
            window: 1,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100]),
                    .at(1, .pause, Outcome(.stream)),
                    .at(2, .resume, Outcome(.stream)), .fill(sends: []),
                    .at(3, .answer(start: 100, offset: 200), Outcome(.stream)),
                    .at(4, .pause, Outcome(.pause)),
                    .at(5, .pause, Outcome(.pause)),
                    .at(6, .resume, Outcome(.open)),
                ]
            }
        ),
        Scenario(
            name: "a failed chunk that still matters ends the upload; a cancelled or covered one does not",
            window: 2,
            steps: {
                [
                    .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 100, size: 100), Outcome(.stream)),
                    .fill(sends: [100, 200]),
                    .at(1, .failure(start: 100, cancelled: true), Outcome(.stream)), .fill(sends: [300]),
                    .at(2, .answer(start: 200, offset: 300), Outcome(.stream)), .fill(sends: [400]),
                    .at(3, .failure(start: 300, cancelled: false), Outcome(.fail, failure: "chunk error")),
                ]
            }
        ),
    ]

    @Test(arguments: scenarios)
    func policies(_ scenario: Scenario) {
        var machine = Self.machine(window: scenario.window, ceiling: scenario.ceiling, restarts: scenario.restarts)
        Self.run(scenario.steps(), on: &machine)
        if let window = scenario.finalWindow { #expect(machine.windowSize == window) }
    }

    /// The reports carry what the caller sees: progress with the bytes sent again, the device's
    /// offset of a resumed upload, and window changes in order.
    @Test func progressCountsWhatWasSentAndTheRateStartsAtTheOpeningAnswer() {
        var machine = Self.machine(total: 1000, window: 1)
        _ = machine.start()
        // The slot erase took 5 s: not transfer time.
        guard case .stream(let opened) = machine.openingAnswered(deviceOffset: 100, openingSize: 100, now: .seconds(5))
        else {
            Issue.record("not streaming")
            return
        }
        #expect(
            opened.events == [
                .progress(.init(bytesConfirmed: 100, totalBytes: 1000, bytesSent: 100, bytesPerSecond: 0))
            ]
        )
        var start = machine.nextChunk()
        var now = Duration.seconds(5)
        while let offset = start {
            machine.chunkSent(start: offset, size: 100)
            now += .seconds(1)
            let action = machine.chunkAnswered(
                start: offset,
                deviceOffset: offset + 100,
                roundTrip: .seconds(1),
                now: now
            )
            if case .finish(let report) = action {
                let last = report.events.compactMap { if case .progress(let p) = $0 { p } else { nil } }.last
                #expect(last?.bytesConfirmed == 1000)
                #expect(last?.bytesSent == 1000)
                // 900 bytes in the 9 s since the opening answer.
                #expect(last?.bytesPerSecond == 100)
                return
            }
            start = machine.nextChunk()
        }
        Issue.record("the upload did not finish")
    }

    /// `match: false`: the device hashed the whole upload and it differs. The driver reads the
    /// verdict from the final answer and hands the machine a failed chunk that matters.
    @Test func aDeviceHashMismatchFailsTheFinalChunk() {
        let upload = ImageUpload(data: .init(repeating: 1, count: 1000), sha256: .init(repeating: 2, count: 32))
        let mismatch = UploadDriver.offset(of: .success(.init(offset: 1000, match: false)), upload)
        #expect(throws: SMPTransferError(.deviceHashMismatch)) { try mismatch.get() }
        #expect((try? UploadDriver.offset(of: .success(.init(offset: 1000, match: true)), upload).get()) == 1000)
        #expect((try? UploadDriver.offset(of: .success(.init(offset: 500, match: nil)), upload).get()) == 500)
        var machine = Self.machine(total: 1000, window: 1)
        Self.run(
            [
                .at(0, .start, Outcome(.open)), .at(0, .opened(offset: 900, size: 100), Outcome(.stream, resumed: 900)),
                .fill(sends: [900]),
                .at(1, .failure(start: 900, cancelled: false), Outcome(.fail, failure: "chunk error")),
            ],
            on: &machine
        )
    }

    /// A late answer is dropped with its request, so a chunk timeout shorter than the device's
    /// round trip must grow, or nothing would ever count: each timeout in a row doubles it up to a
    /// quarter of the silence limit, an answer in time brings it back, and slow answers keep it at
    /// four smoothed round trips.
    @Test func theChunkTimeoutBacksOffWhileAnswersComeTooLate() {
        var machine = UploadStateMachine(
            configuration: .init(
                total: 100_000,
                maximumRestarts: 2,
                silenceLimit: .seconds(8),
                chunkTimeout: .milliseconds(80),
                busyBackoff: .milliseconds(2)
            ),
            window: AdaptiveWindow(initial: 1, ceiling: 1)
        )
        _ = machine.start()
        _ = machine.openingAnswered(deviceOffset: 100, openingSize: 100, now: .zero)
        #expect(machine.chunkTimeout == .milliseconds(80))
        var now = Duration.zero
        var waits: [Duration] = []
        for _ in 0..<7 {
            guard let start = machine.nextChunk() else {
                Issue.record("nothing to send after a timeout")
                return
            }
            machine.chunkSent(start: start, size: 100)
            now += machine.chunkTimeout
            guard case .stream = machine.chunkTimedOut(start: start, now: now) else {
                Issue.record("the upload stopped at \(now)")
                return
            }
            waits.append(machine.chunkTimeout)
        }
        #expect(waits == [160, 320, 640, 1280, 2000, 2000, 2000].map { Duration.milliseconds($0) })
        // An answer in time: back to the configured timeout.
        guard let start = machine.nextChunk() else {
            Issue.record("nothing to send")
            return
        }
        machine.chunkSent(start: start, size: 100)
        _ = machine.chunkAnswered(start: start, deviceOffset: 200, roundTrip: .milliseconds(2), now: now)
        #expect(machine.chunkTimeout == .milliseconds(80))
        // Answers that take 400 ms: the smoothed round trip climbs and the timeout follows it.
        var offset = 200
        for _ in 0..<16 {
            guard let next = machine.nextChunk() else { break }
            machine.chunkSent(start: next, size: 100)
            now += .milliseconds(400)
            offset += 100
            _ = machine.chunkAnswered(start: next, deviceOffset: offset, roundTrip: .milliseconds(400), now: now)
        }
        #expect(machine.chunkTimeout > .milliseconds(1200))
        #expect(machine.chunkTimeout <= .milliseconds(1600))
        // Silence past the limit still ends the upload, and the message says how long it waited.
        guard let last = machine.nextChunk() else {
            Issue.record("nothing to send")
            return
        }
        machine.chunkSent(start: last, size: 100)
        guard case .fail(_, .silent(let error)) = machine.chunkTimedOut(start: last, now: now + .seconds(9)) else {
            Issue.record("nine silent seconds did not end the upload")
            return
        }
        #expect(error.message.contains("no answer for 9.0 s"))
    }
}
