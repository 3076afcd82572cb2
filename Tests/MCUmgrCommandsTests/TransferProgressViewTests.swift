import Foundation
import SMPBytes
import SMPLink
import Testing

@testable import MCUmgr
@testable import MCUmgrCommands

/// How transfer progress is drawn: the bar, the plain lines, the JSON objects.
@Suite struct TransferProgressViewTests {
    static func progress(_ done: Int, of total: Int, rate: Double = 2048, eta: Duration? = .seconds(3))
        -> TransferProgress
    {
        TransferProgress(
            bytesConfirmed: done,
            totalBytes: total,
            bytesSent: done,
            bytesPerSecond: rate,
            estimatedTimeRemaining: eta
        )
    }

    /// A transfer's closing figures: milliseconds under a second, and no rate under a tenth of
    /// a second (a file of a few bytes measures the round trip, not a speed).
    @Test(arguments: [
        (6, Duration.milliseconds(17), "6 B in 17 ms"),
        (4700, .milliseconds(99), "4.6 KiB in 99 ms"),
        (4700, .milliseconds(300), "4.6 KiB in 300 ms (15.3 KiB/s)"),
        (200_000, .milliseconds(1400), "195.3 KiB in 1.4 s (139.5 KiB/s)"),
    ])
    func completionIsSensibleForSmallTransfers(_ bytes: Int, _ elapsed: Duration, _ expected: String) {
        #expect(TransferProgressView.completion(bytes: bytes, elapsed: elapsed) == expected)
    }

    @Test func summaryHasPercentBytesRateAndETA() {
        #expect(
            TransferProgressView.summary(Self.progress(4096, of: 10240))
                == " 40%  4.0 KiB/10.0 KiB  2.0 KiB/s  ETA 0:03"
        )
        #expect(TransferProgressView.summary(Self.progress(10240, of: 10240)) == "100%  10.0 KiB/10.0 KiB  2.0 KiB/s")
        #expect(TransferProgressView.summary(Self.progress(0, of: 100, rate: 0, eta: nil)) == "  0%  0 B/100 B")
    }

    @Test func barFillsInProportion() {
        let bar = TransferProgressView.bar(Self.progress(5, of: 10), label: "upload", width: 10)
        #expect(bar == "upload [#####.....]  50%  5 B/10 B  2.0 KiB/s  ETA 0:03")
    }

    @Test func sizesAndTimesForPeople() {
        #expect(TransferProgressView.bytes(1023) == "1023 B")
        #expect(TransferProgressView.bytes(1536) == "1.5 KiB")
        #expect(TransferProgressView.bytes(3 * 1024 * 1024) == "3.00 MiB")
        #expect(TransferProgressView.clockTime(59.2) == "1:00")
        #expect(TransferProgressView.clockTime(3725) == "1:02:05")
    }

    @Test func plainLinesAppearAtEveryTenth() {
        let lines = LockedLines()
        Console.$error.withValue(Console.Sink(write: lines.append)) {
            var view = TransferProgressView(label: "upload", json: false)
            #expect(view.style == .lines)
            for done in stride(from: 0, through: 1000, by: 10) { view.update(Self.progress(done, of: 1000)) }
            view.finish()
        }
        #expect(lines.all.count == 11)
        #expect(lines.all.first == "upload    0%  0 B/1000 B  2.0 KiB/s  ETA 0:03")
        #expect(lines.all.last == "upload  100%  1000 B/1000 B  2.0 KiB/s")
    }

    @Test func jsonIsOneObjectPerUpdateOnStdout() {
        let lines = LockedLines()
        Console.$output.withValue(Console.Sink(write: lines.append)) {
            var view = TransferProgressView(label: "download", json: true)
            view.update(Self.progress(512, of: 1024, rate: 100.04, eta: .milliseconds(5120)))
            view.finish()
        }
        #expect(
            lines.all == [
                #"{"event":"progress","stage":"download","off":512,"len":1024,"sent":512,"rate":100.0,"eta":5.1}"#
            ]
        )
    }

    @Test func jsonIsAtMostOneObjectPerPercent() {
        let lines = LockedLines()
        Console.$output.withValue(Console.Sink(write: lines.append)) {
            var view = TransferProgressView(label: "upload", json: true)
            for done in 0...1000 { view.update(Self.progress(done, of: 1000)) }
        }
        #expect(lines.all.count == 101)
        #expect(lines.all.last?.contains(#""off":1000,"len":1000"#) == true)
    }
}

final class LockedLines: Sendable {
    private let lines = Locked<[String]>([])
    func append(_ line: String) { lines.withLock { $0.append(line) } }
    var all: [String] { lines.withLock { $0 } }
}

struct TransferProgressTerminalTests {
    @Test func aTerminalGetsOneRedrawnBarAndNoLines() {
        let partial = LockedLines()
        let lines = LockedLines()
        Console.$error.withValue(Console.Sink(isTerminal: true, writePartial: partial.append, write: lines.append)) {
            var view = TransferProgressView(label: "upload", json: false)
            #expect(view.style == .terminal)
            view.update(TransferProgress(bytesConfirmed: 1000, totalBytes: 1000, bytesSent: 1000, bytesPerSecond: 2048))
            view.finish()
        }
        #expect(partial.all.first?.hasPrefix("\rupload") == true)
        #expect(partial.all.last == "\n")
        #expect(lines.all.isEmpty)
    }
}

/// How a transfer that threw ends its view: an interrupt says how far it got and its bar
/// gives way to the error line; any other failure keeps the bar above the error.
struct TransferProgressEndingTests {
    /// Draws a bar at 30%, ends the view with `error` and prints the error line as `main` does.
    static func endAt30Percent(_ error: any Error, resumes: Bool) -> (thrown: any Error, screen: [String]) {
        let terminal = Terminal()
        let thrown = Console.$error.withValue(terminal.sink) {
            var view = TransferProgressView(label: "upload", json: false)
            view.update(TransferProgressViewTests.progress(300, of: 1000))
            let thrown = view.ending(error, resumes: resumes)
            Console.err("error: \(FailureReport(thrown).message)")
            return thrown
        }
        return (thrown, terminal.screen)
    }

    @Test(arguments: [true, false])
    func anInterruptSaysHowFarAndReplacesTheBar(_ resumes: Bool) throws {
        let (thrown, screen) = Self.endAt30Percent(CancellationError(), resumes: resumes)
        let interrupted = try #require(thrown as? Interrupted)
        #expect(interrupted.percent == 30)
        let next = resumes ? "resume" : "start over"
        #expect(screen == ["error: interrupted at 30%; run the same command again to \(next)"])
        #expect(FailureReport(thrown).status == .interrupted)
    }

    @Test func aFailureKeepsTheBarAboveTheError() {
        let failure = SMPTransportError(.disconnected, "the link went away")
        let (thrown, screen) = Self.endAt30Percent(failure, resumes: true)
        #expect(thrown is SMPTransportError)
        #expect(screen.count == 2)
        #expect(screen.first?.hasPrefix("upload [#######.") == true, "\(screen)")
        #expect(screen.last?.hasPrefix("error: ") == true)
        #expect(screen.last?.contains("the link went away") == true)
    }

    /// Once the task is cancelled, whatever ended the transfer (a link the cancellation closed)
    /// is the interrupt.
    @Test func anErrorAfterTheCancellationIsTheInterrupt() async {
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return Interrupted.isInterrupt(SMPTransportError(.disconnected, "closed"))
        }
        #expect(await task.value)
        #expect(!Interrupted.isInterrupt(SMPTransportError(.disconnected, "closed")))
    }
}
