import Foundation
import SMPCore
import Testing

@testable import MCUmgr

/// The download's decisions as tables: `DownloadStateMachine` without a client or a device.
struct DownloadStateMachineTests {
    /// An answer: the request it answers, the answer's own offset, and how many bytes it carries.
    struct Answer: Sendable {
        var start: Int
        var offset: Int
        var count: Int
    }

    struct Scenario: CustomTestStringConvertible, Sendable {
        var name: String
        var length: Int
        var window: Int
        /// The first answer's bytes.
        var first: Int
        /// Each round: the requests the driver is given, then the answer it delivers.
        var rounds: [(requests: [Int], answer: Answer?)]
        var end: End
        var testDescription: String { name }

        enum End: Sendable, Equatable {
            case finished
            case failed(String)
            case requesting
        }
    }

    static let scenarios: [Scenario] = [
        Scenario(
            name: "the stride of the first answer predicts the requests; answers in order finish",
            length: 1000,
            window: 3,
            first: 300,
            rounds: [
                ([300, 600, 900], Answer(start: 300, offset: 300, count: 300)),
                ([], Answer(start: 600, offset: 600, count: 300)),
                ([], Answer(start: 900, offset: 900, count: 100)),
            ],
            end: .finished
        ),
        Scenario(
            name: "a short answer leaves a gap that is requested again",
            length: 1000,
            window: 2,
            first: 300,
            rounds: [
                ([300, 600], Answer(start: 300, offset: 300, count: 200)),
                ([500], Answer(start: 600, offset: 600, count: 300)),
                ([900], Answer(start: 500, offset: 500, count: 100)),
                ([], Answer(start: 900, offset: 900, count: 100)),
            ],
            end: .finished
        ),
        Scenario(
            name: "an empty file is done with the first answer",
            length: 0,
            window: 3,
            first: 0,
            rounds: [],
            end: .finished
        ),
        Scenario(
            name: "a device that keeps answering with nothing new fails the download",
            length: 1000,
            window: 1,
            first: 100,
            rounds: [([100], Answer(start: 100, offset: 0, count: 100))]
                + Array(repeating: ([100], Answer(start: 100, offset: 0, count: 100)), count: 8),
            end: .failed("invalid response")
        ),
    ]

    @Test(arguments: scenarios)
    func policies(_ scenario: Scenario) {
        var machine = DownloadStateMachine(name: "/lfs1/f", window: scenario.window)
        #expect(machine.start(now: .zero) == .requestFirst)
        var action = machine.firstAnswered(
            length: UInt64(scenario.length),
            offset: 0,
            data: Data(repeating: 7, count: scenario.first),
            now: .milliseconds(1)
        )
        for (index, round) in scenario.rounds.enumerated() {
            guard case .request = action else { break }
            var requested: [Int] = []
            while let (start, size) = machine.nextRequest() {
                machine.requestSent(start: start, size: size)
                requested.append(start)
            }
            #expect(requested == round.requests, "round \(index)")
            if let answer = round.answer {
                action = machine.answered(
                    start: answer.start,
                    offset: answer.offset,
                    data: Data(repeating: UInt8(truncatingIfNeeded: answer.offset), count: answer.count),
                    now: .milliseconds(2 + index)
                )
            }
        }
        switch (action, scenario.end) {
        case (.finish(_, let data), .finished):
            #expect(data.count == scenario.length)
        case (.fail(.invalidResponse(let error)), .failed(let code)):
            #expect("\(error.code)" == code)
        case (.request, .requesting):
            break
        default:
            Issue.record("ended with \(action), expected \(scenario.end)")
        }
    }

    @Test func aFirstAnswerWithoutLengthOrTooLongIsInvalid() {
        var machine = DownloadStateMachine(name: "/lfs1/f", window: 1)
        _ = machine.start(now: .zero)
        #expect(
            machine.firstAnswered(length: nil, offset: 0, data: Data(), now: .zero)
                == .fail(.invalidResponse(SMPError(.invalidResponse)))
        )
        var huge = DownloadStateMachine(name: "/lfs1/f", window: 1)
        _ = huge.start(now: .zero)
        #expect(
            huge.firstAnswered(length: UInt64(Int32.max) + 1, offset: 0, data: Data(), now: .zero)
                == .fail(.invalidResponse(SMPError(.invalidResponse)))
        )
    }

    /// Requests wholly covered by other answers are withdrawn; a failed request that still matters
    /// ends the download, a cancelled one does not.
    @Test func coveredRequestsAreWithdrawnAndFailuresThatMatterEndIt() {
        var machine = DownloadStateMachine(name: "/lfs1/f", window: 3)
        _ = machine.start(now: .zero)
        _ = machine.firstAnswered(length: 1000, offset: 0, data: Data(count: 100), now: .zero)
        while let (start, size) = machine.nextRequest() { machine.requestSent(start: start, size: size) }
        // One answer at 100 carries 300 bytes: the requests at 200 and 300 are covered.
        guard case .request(let report) = machine.answered(start: 100, offset: 100, data: Data(count: 300), now: .zero)
        else {
            Issue.record("not requesting")
            return
        }
        #expect(report.withdraw == [200, 300])
        while let (start, size) = machine.nextRequest() { machine.requestSent(start: start, size: size) }
        guard case .request = machine.failed(start: 400, cancelled: true) else {
            Issue.record("a cancelled request ended the download")
            return
        }
        while let (start, size) = machine.nextRequest() { machine.requestSent(start: start, size: size) }
        #expect(machine.failed(start: 400, cancelled: false) == .fail(.requestError))
    }
}
