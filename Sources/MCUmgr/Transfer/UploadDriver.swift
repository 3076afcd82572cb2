import Foundation
import Logging
import SMPCore
import SMPLink

/// Performs an ``UploadStateMachine``'s actions over a client and feeds the outcomes back;
/// decides nothing. One per upload. The client hands every answer to ``inbox`` from its own
/// executor (no task per chunk); this loop takes them from there on the global executor, so each
/// answer is one job in the queue every task of the process shares: an upload that kept the
/// client's executor would run ahead of everything else for as long as answers came (measured:
/// the suite's in-process devices then starved for seconds). Tried again with one timer per
/// upload (issue 23, commit aab2e74): a fifth fewer context switches per uploaded chunk, but
/// beside stress-ng one pass of the suite had nine upgrade tests end at an upload's silence
/// limit (in-process devices silent for over a second), where passes without it had one such
/// failure at most. Not shown to be safe, so the driver stays on the global executor.
struct UploadDriver<U: ChunkedUpload> {
    let client: SMPClient
    let upload: U
    let options: TransferOptions
    let report: @Sendable (TransferEvent) -> Void
    let logger: Logger
    let clock: SMPClock
    private let inbox = TransferInbox<TransferInput>()
    private var machine: UploadStateMachine
    private var sizer: ChunkSizer<U>
    /// The chunks in flight: start offset → the tag its answer carries, the client's request, and
    /// when it times out.
    private var live: [Int: (tag: Int, request: Int, deadline: Duration)] = [:]
    /// The one timer of the chunks in flight, and the deadline it wakes for.
    private var timer: (task: Task<Void, Never>, deadline: Duration)?
    private var nextTag = 0
    /// The error of the chunk whose failure ends the upload.
    private var chunkError: (any Error)?
    private var windowChanges = 0
    /// The pause and resume of the caller, and this upload's identifier there.
    private let control: (control: TransferControl, id: Int)?

    /// Prepares an upload: reads the device's parameters (once per connection) and sizes frames
    /// and the window from them.
    init(
        _ upload: U,
        options: TransferOptions,
        control: TransferControl?,
        client: SMPClient,
        report: @escaping @Sendable (TransferEvent) -> Void
    ) async throws {
        _ = try await client.loadParameters()
        self.client = client
        self.upload = upload
        self.options = options
        self.report = report
        logger = client.transferLogger
        clock = client.configuration.clock
        // Without the device's buffer size, frames stay within what every device takes: a longer
        // one may be dropped without a word (MCUboot's serial recovery cannot decode it). A size
        // the user gave the link is theirs to answer for.
        let unknownDevice =
            await client.deviceParameters == nil && !client.connection.frameSizeIsChosen
            ? SMPClient.sizeFittingEveryDevice : Int.max
        let limit = min(options.maximumFrameSize ?? Int.max, await client.maximumFrameSize, unknownDevice)
        sizer = ChunkSizer(upload: upload, limit: limit, alignment: options.alignment)
        let chunkTimeout = options.chunkTimeout ?? client.configuration.timeout
        let retries = client.configuration.retries
        machine = UploadStateMachine(
            configuration: .init(
                total: upload.data.count,
                maximumRestarts: options.maximumRestarts,
                // The longest the device may stay silent while chunks are re-sent: what the
                // client's timeout and retries promise for one request.
                silenceLimit: chunkTimeout * (retries + 1),
                chunkTimeout: chunkTimeout,
                busyBackoff: client.configuration.busyBackoff
            ),
            window: await client.transferWindow(forced: options.window)
        )
        if let control {
            self.control = (control, control.attach(inbox))
        } else {
            self.control = nil
        }
    }

    /// Runs the upload to its end.
    /// - Throws: the first fatal error; `CancellationError` when the task is cancelled.
    mutating func run() async throws {
        defer { inbox.finish() }
        do {
            try await inbox.reading { try await loop() }
        } catch {
            await withdrawAll()
            throw error
        }
        await withdrawAll()
    }

    private mutating func loop() async throws {
        var action = machine.start()
        while true {
            switch action {
            case .openSession(let report):
                try await perform(report)
                await withdrawAll()
                control.map { $0.control.holds($0.id, false) }
                action = try await openSession()
            case .stream(let report):
                try await perform(report)
                try await fill()
                action = try await nextInput()
            case .pause(let report):
                try await perform(report)
                control.map { $0.control.holds($0.id, true) }
                action = try await nextInput()
            case .checkCompletion(let report):
                try await perform(report)
                let holds = await upload.isComplete(on: client)
                action = machine.completionChecked(deviceHoldsUpload: holds, now: clock.elapsed())
            case .finish(let report):
                try await perform(report)
                return
            case .fail(let report, let failure):
                try await perform(report)
                throw error(of: failure)
            }
        }
    }

    private func error(of failure: UploadStateMachine.Failure) -> any Error {
        switch failure {
        case .transfer(let error): error
        case .silent(let error): error
        case .chunkError:
            chunkError ?? SMPTransportError(.disconnected, "a chunk failed without an error")
        }
    }

    // MARK: - Actions

    /// Logs, reports, withdraws and pauses as a report says.
    private mutating func perform(_ report: UploadStateMachine.Report) async throws {
        for note in report.notes { log(note) }
        for event in report.events {
            if case .windowChanged(let change) = event {
                // Said once at -v; the rest (and the summary at the end) at -vv.
                if windowChanges == 0 {
                    logger.debug("adapting the window to the device", metadata: ["change": "\(change)"])
                } else {
                    logger.trace("window", metadata: ["change": "\(change)"])
                }
                windowChanges += 1
            } else if case .resumed(let offset) = event {
                logger.debug("the device resumes an interrupted upload", metadata: ["offset": "\(offset)"])
            }
            self.report(event)
        }
        for start in report.withdraw { await withdraw(start) }
        if report.pause > .zero { try await clock.sleep(report.pause) }
    }

    /// Sends the session-opening chunk (alone, with the long timeout: the device may erase a
    /// whole slot first) and hands its answer to the machine.
    private mutating func openSession() async throws -> UploadStateMachine.Action {
        let size = min(try sizer.size(at: 0, isFirst: true), options.openingChunkLimit ?? Int.max)
        let opening = upload.request(offset: 0, data: upload.data.chunk(0, size), isFirst: true)
        let result: Result<U.Request.Response, any Error>
        do {
            result = .success(try await client.send(opening, timeout: options.firstChunkTimeout))
        } catch {
            result = .failure(error)
        }
        let offset = try Self.offset(of: result, upload).get()
        return machine.openingAnswered(deviceOffset: offset, openingSize: size, now: clock.elapsed())
    }

    /// Fills the window. Chunks are submitted one after another, so they leave in offset order;
    /// each is sent once: the machine, not the client, decides what to send again. The driver
    /// times chunks out itself, with one timer (``armTimer()``): a watchdog task per chunk in the
    /// client (a task, a sleep and its cancellation for every 1.4 KiB) was a large share of an
    /// upload's CPU.
    private mutating func fill() async throws {
        while let start = machine.nextChunk() {
            let size = try sizer.size(at: start, isFirst: false)
            let request = upload.request(offset: start, data: upload.data.chunk(start, size), isFirst: false)
            nextTag += 1
            let tag = nextTag
            let sentAt = clock.elapsed()
            let timeout = machine.chunkTimeout
            let (inbox, upload, clock) = (self.inbox, self.upload, self.clock)
            let id = try await client.submit(request, timeout: nil) { result in
                let answer = ChunkAnswer(
                    start: start,
                    tag: tag,
                    result: Self.offset(of: result, upload),
                    roundTrip: clock.elapsed() - sentAt
                )
                inbox.yield(.answer(answer))
            }
            // Timed from when the send returned, as the client's watchdog was.
            live[start] = (tag, id, clock.elapsed() + timeout)
            machine.chunkSent(start: start, size: size)
        }
        armTimer()
    }

    /// Makes sure the timer wakes by the earliest deadline in flight. A chunk answered in time
    /// just leaves ``live``; a timer that wakes for it finds nothing overdue and is set again.
    private mutating func armTimer() {
        guard let earliest = live.values.lazy.map(\.deadline).min() else { return }
        if let timer, timer.deadline <= earliest { return }
        timer?.task.cancel()
        let (inbox, clock) = (self.inbox, self.clock)
        let task = Task {
            let wait = earliest - clock.elapsed()
            if wait > .zero {
                do {
                    try await clock.sleep(wait)
                } catch {
                    return  // set again for an earlier deadline, or the upload ended
                }
            }
            inbox.yield(.tick)
        }
        timer = (task, earliest)
    }

    /// The timer woke: the first chunk whose deadline has passed is timed out, the way the client
    /// timed requests out (its request is forgotten, so an answer that still comes is dropped).
    /// The timer is set again for the rest: others already overdue follow at once, through the
    /// inbox, after what is queued there.
    private mutating func timedOut(now: Duration) async -> UploadStateMachine.Action? {
        // A tick of a timer since replaced by one for an earlier deadline leaves that one running.
        if let timer, timer.deadline <= now { self.timer = nil }
        let overdue = live.filter { $0.value.deadline <= now }.keys.min()
        guard let start = overdue, let entry = live.removeValue(forKey: start) else {
            armTimer()
            return nil
        }
        await client.withdraw(entry.request)
        armTimer()
        return machine.chunkTimedOut(start: start, now: now)
    }

    /// Waits for the next answer of a chunk in flight, or a pause or resume, and hands it to the
    /// machine.
    private mutating func nextInput() async throws -> UploadStateMachine.Action {
        while true {
            guard let input = await inbox.next() else {
                try Task.checkCancellation()
                throw SMPTransportError(.disconnected, "the upload stopped before the device confirmed every byte")
            }
            try Task.checkCancellation()
            let now = clock.elapsed()
            switch input {
            case .pause: return machine.pause(now: now)
            case .resume: return machine.resume(now: now)
            case .tick:
                if let action = await timedOut(now: now) { return action }
            case .answer(let answer):
                // An answer of a sending since withdrawn or replaced is stale.
                guard live[answer.start]?.tag == answer.tag else { continue }
                live[answer.start] = nil
                return deliver(answer, now: now)
            }
        }
    }

    /// Hands a chunk's answer to the machine as the event it is.
    private mutating func deliver(_ answer: ChunkAnswer, now: Duration) -> UploadStateMachine.Action {
        switch answer.result {
        case .success(let offset):
            return machine.chunkAnswered(
                start: answer.start,
                deviceOffset: offset,
                roundTrip: answer.roundTrip,
                now: now
            )
        case .failure(let error as SMPDeviceError) where error.isTransientRefusal:
            // Back-pressure: the device did not process the chunk, so nothing after it was
            // written either.
            let refusal: UploadStateMachine.Refusal = error.returnCode == .busy ? .busy : .outOfBuffers
            return machine.chunkRefused(start: answer.start, refusal, now: now)
        case .failure(let error as SMPTransportError) where error.code == .timeout:
            return machine.chunkTimedOut(start: answer.start, now: now)
        case .failure(let error):
            chunkError = error
            return machine.chunkFailed(start: answer.start, cancelled: error is CancellationError)
        }
    }

    /// The device's next offset from an answer, or from a refusal that names it (FS). The answer
    /// that completes the upload is checked for the device's verdict on the data.
    static func offset(of result: Result<U.Request.Response, any Error>, _ upload: U) -> Result<Int, any Error> {
        switch result {
        case .success(let response):
            let next = upload.nextOffset(from: response)
            if next >= upload.data.count {
                do {
                    try upload.checkCompletion(response)
                } catch {
                    return .failure(error)
                }
            }
            return .success(next)
        case .failure(let error as SMPDeviceError):
            guard let expected = upload.expectedOffset(after: error) else { return .failure(error) }
            return .success(expected)
        case .failure(let error):
            return .failure(error)
        }
    }

    private mutating func withdraw(_ start: Int) async {
        guard let entry = live.removeValue(forKey: start) else { return }
        await client.withdraw(entry.request)
    }

    private mutating func withdrawAll() async {
        for entry in live.values { await client.withdraw(entry.request) }
        live.removeAll()
        timer?.task.cancel()
        timer = nil
    }

    private func log(_ note: UploadStateMachine.Note) {
        switch note {
        case .resynchronised(let deviceOffset, let abandoned):
            logger.trace(
                "resynchronising with the device",
                metadata: ["device_offset": "\(deviceOffset)", "abandoned": "\(abandoned)"]
            )
        case .stoppedAdvancing(let confirmed):
            logger.debug("the device stopped advancing; reopening the session", metadata: ["confirmed": "\(confirmed)"])
        case .sessionLost:
            logger.debug("the device lost the upload session; opening it again")
        case .lastAnswerLost:
            logger.debug("the device holds the whole upload; its last answer was lost")
        case .summary(let summary):
            logger.debug(
                "the window adapted to the device",
                metadata: [
                    "first": "\(summary.first)", "smallest": "\(summary.smallest)", "final": "\(summary.final)",
                    "why": "\(summary.reasons)", "bytes_sent_again": "\(summary.bytesSentAgain)",
                ]
            )
        }
    }
}

/// What reaches a transfer's driver: the answers of its requests, the caller's pause and resume,
/// and its timer.
enum TransferInput: Sendable {
    case answer(ChunkAnswer)
    case pause
    case resume
    /// The earliest deadline of the chunks in flight (when the timer was set) has passed.
    case tick
}

/// The answer of one sending of the chunk at `start`.
struct ChunkAnswer: Sendable {
    var start: Int
    /// Which sending this answers; answers of a sending since withdrawn are stale.
    var tag: Int
    /// The device's next offset, or why there is none.
    var result: Result<Int, any Error>
    /// From the chunk's send to its answer.
    var roundTrip: Duration
}

extension Data {
    /// `count` bytes from `offset`, sharing this data's storage (no copy: the frame encoder
    /// copies the bytes once, into the frame).
    func chunk(_ offset: Int, _ count: Int) -> Data {
        self[(startIndex + offset)..<(startIndex + offset + count)]
    }
}
