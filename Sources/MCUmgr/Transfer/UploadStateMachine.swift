import SMPLink

/// Every decision of a chunked upload, as a pure state machine in swift-nio's style: each state
/// carries only the data valid in it, each event has its own method returning an ``Action``, and
/// an event the driver can never deliver in a state traps. No `await`, no clock (times come in
/// as arguments), no I/O: ``UploadDriver`` sends what the actions say and feeds the answers back.
///
/// The policies (docs/UPGRADE.md, "Upload window"):
/// - the session-opening chunk goes alone; the device's answer is its offset (a resumed
///   interrupted upload, or nothing kept: reopen);
/// - a window of chunks in flight (``AdaptiveWindow``): `ENOMEM`, `EBUSY` or silence halve it and
///   sending continues from the refused chunk, after a pause for the requests the device still
///   holds (at least one smoothed round trip after `ENOMEM` at window 1: a device whose buffers
///   stay held is not hammered); answers that move the upload forward grow it;
/// - the device is the truth: its offset resynchronises the pipeline (``UploadWindow``);
/// - a device silent for the silence limit fails the upload; one that answers without advancing
///   `2 × window + 8` times, or answers offset 0 mid-transfer, gets the session reopened, at
///   most `maximumRestarts` times;
/// - a pause stops sending after the chunks in flight; a resume reopens the session, whose answer
///   is the device's offset.
struct UploadStateMachine {
    /// What stays fixed for one upload.
    struct Configuration: Sendable, Hashable {
        /// Bytes to upload.
        var total: Int
        /// Session reopenings tolerated before the upload fails.
        var maximumRestarts: Int
        /// The longest the device may stay silent while chunks are sent again.
        var silenceLimit: Duration
        /// The timeout of a chunk while answers come in time (``chunkTimeout`` backs it off).
        var chunkTimeout: Duration
        /// Added to the pause after `EBUSY`.
        var busyBackoff: Duration
    }

    /// A refusal that is back-pressure, not failure: the device did not process the chunk.
    enum Refusal: Sendable, Hashable {
        /// `ENOMEM`: no buffer for the answer.
        case outOfBuffers
        /// `EBUSY`.
        case busy
    }

    /// What the driver does next. Every case but ``fail(_:_:)`` carries a ``Report`` to act on first.
    enum Action: Sendable, Hashable {
        /// Send the session-opening chunk (offset 0, the identifying fields) and call
        /// ``openingAnswered(deviceOffset:openingSize:now:)`` with the device's offset.
        case openSession(Report)
        /// Send the chunks ``nextChunk()`` gives, then deliver the next answer or control input.
        case stream(Report)
        /// Nothing is in flight: wait for ``resume(now:)``.
        case pause(Report)
        /// Ask the device whether it holds the whole upload (its last answer was lost) and call
        /// ``completionChecked(deviceHoldsUpload:now:)``.
        case checkCompletion(Report)
        /// The device confirmed every byte.
        case finish(Report)
        /// The upload failed.
        case fail(Report, Failure)
    }

    /// What to do before the next step: log, report, withdraw requests, pause.
    struct Report: Sendable, Hashable {
        /// For the transfer's log.
        var notes: [Note] = []
        /// For the caller, in order.
        var events: [TransferEvent] = []
        /// Chunks (by start offset) whose requests are abandoned: their answers no longer matter.
        var withdraw: [Int] = []
        /// How long to wait before sending more.
        var pause: Duration = .zero
    }

    /// A fact for the log, said by the driver.
    enum Note: Sendable, Hashable {
        /// The device's offset moved the pipeline; this many chunks in flight were abandoned.
        case resynchronised(deviceOffset: Int, abandoned: Int)
        /// Answers without progress reached the stall limit.
        case stoppedAdvancing(confirmed: Int)
        /// The device answered offset 0 mid-transfer and does not hold the upload.
        case sessionLost
        /// The device ended the session because it holds the whole upload; its last answer was lost.
        case lastAnswerLost
        /// How the window adapted, when it did (logged once at the end).
        case summary(Summary)
    }

    /// How the window adapted over the upload.
    struct Summary: Sendable, Hashable {
        var first: Int
        var smallest: Int
        var final: Int
        /// Back-pressure by reason, e.g. "a chunk got no answer ×2".
        var reasons: String
        var bytesSentAgain: Int
    }

    /// Why the upload failed.
    enum Failure: Sendable, Hashable {
        /// The device stalled or kept losing its session (``SMPTransferError``).
        case transfer(SMPTransferError)
        /// The device stayed silent for the silence limit (``SMPTransportError/Code/timeout``).
        case silent(SMPTransportError)
        /// A chunk that still mattered failed: the driver throws that chunk's error.
        case chunkError
    }

    /// What a restart keeps: everything that spans the sessions of one upload.
    struct Ledger: Sendable, Hashable {
        var window: AdaptiveWindow
        var restarts = 0
        /// Data bytes sent in sessions already closed.
        var sentBefore = 0
        /// Where the device resumed an interrupted upload (0: it did not).
        var resumedAt = 0
        /// Rates count from the opening chunk's answer (the slot erase is not transfer time) and
        /// only the bytes confirmed since.
        var rateStart: RateStart?
        /// Every window change, for the summary.
        var changes: [WindowChange] = []
    }

    struct RateStart: Sendable, Hashable {
        var time: Duration
        var confirmed: Int
    }

    /// The session-opening chunk in flight.
    struct Opening: Sendable, Hashable {
        var ledger: Ledger
        /// Reopened after a pause: the device's offset is where we stopped, not an interrupted upload.
        var afterPause = false
    }

    /// A session after its opening chunk: the pipeline and the timing of the answers.
    struct Session: Sendable, Hashable {
        var ledger: Ledger
        var pipeline: UploadWindow
        /// When the device last answered (silence is measured from here).
        var lastAnswer: Duration
        /// Smoothed round trip of a chunk, for the pause after back-pressure.
        var roundTrip: Duration = .milliseconds(2)
        /// Answers since the confirmed offset last grew. A device that lost data it had
        /// confirmed keeps asking for an offset below ours; past the stall limit the session
        /// is reopened, whose answer is the device's own offset.
        var answersWithoutProgress = 0
        var lastConfirmed: Int
        /// Chunks that timed out since the device last answered: each doubles the next chunk's
        /// timeout (``chunkTimeout``).
        var timeoutsInARow = 0
    }

    enum State: Sendable, Hashable {
        case idle(Ledger)
        case opening(Opening)
        case streaming(Session)
        /// A pause was asked for: no new chunks; those in flight are still answered.
        case draining(Session)
        case paused(Ledger)
        /// The device answered offset 0 after every byte was sent: does it hold the upload?
        case checkingCompletion(Session, pauseAsked: Bool)
        case finished
        case failed
        /// Only while an event method runs (keeps the state's data uniquely referenced).
        case modifying
    }

    let configuration: Configuration
    /// Set only by the machine's own methods (here and in its policies' file).
    var state: State

    /// Creates the machine of one upload.
    /// - Parameters:
    ///   - configuration: the upload's fixed facts.
    ///   - window: the window to start with and never exceed.
    init(configuration: Configuration, window: AdaptiveWindow) {
        self.configuration = configuration
        state = .idle(Ledger(window: window))
    }

    /// The current window, for tests and logs.
    var windowSize: Int? {
        switch state {
        case .idle(let ledger), .paused(let ledger): ledger.window.size
        case .opening(let opening): opening.ledger.window.size
        case .streaming(let session), .draining(let session), .checkingCompletion(let session, _):
            session.ledger.window.size
        case .finished, .failed, .modifying: nil
        }
    }

    /// The timeout of the next chunk: the configured one, or longer on a device that answers
    /// slowly (four smoothed round trips) or not at all (doubled by each timeout in a row, as
    /// TCP backs off its retransmission timer), never past a quarter of the silence limit. A
    /// late answer is dropped with its request, so a fixed timeout shorter than the device's
    /// round trip would re-send forever without one answer counting (seen on a loaded machine:
    /// 101 timeouts of 80 ms at offset 512 with no fault injected).
    var chunkTimeout: Duration {
        guard case .streaming(let session) = state else { return configuration.chunkTimeout }
        return chunkTimeout(session)
    }

    /// ``chunkTimeout`` in a session.
    func chunkTimeout(_ session: Session) -> Duration {
        let base = configuration.chunkTimeout
        let ceiling = max(base, configuration.silenceLimit / 4)
        var timeout = max(base, session.roundTrip * 4)
        for _ in 0..<session.timeoutsInARow where timeout < ceiling { timeout *= 2 }
        return min(timeout, ceiling)
    }

    // MARK: - Events

    /// The upload starts: open the session.
    mutating func start() -> Action {
        guard case .idle(let ledger) = state else { preconditionFailure("start() in \(state)") }
        state = .opening(Opening(ledger: ledger))
        return .openSession(Report())
    }

    /// The device answered the session-opening chunk.
    /// - Parameters:
    ///   - deviceOffset: the offset it expects next (later than the chunk when it resumes an
    ///     interrupted upload of the same data; 0 when it kept nothing).
    ///   - openingSize: data bytes in the opening chunk.
    ///   - now: the clock.
    mutating func openingAnswered(deviceOffset: Int, openingSize: Int, now: Duration) -> Action {
        guard case .opening(var opening) = state else { preconditionFailure("openingAnswered in \(state)") }
        state = .modifying
        opening.ledger.sentBefore += openingSize
        if deviceOffset == 0 && openingSize > 0 {
            return restart(
                opening.ledger,
                reason: "the device kept nothing of the opening chunk",
                failing: .stalled,
                report: Report()
            ) { "the device accepted none of the first chunk \($0) times" }
        }
        var report = Report()
        let total = configuration.total
        if opening.afterPause {
            opening.ledger.rateStart = RateStart(time: now, confirmed: min(deviceOffset, total))
        } else {
            if deviceOffset > openingSize {
                opening.ledger.resumedAt = deviceOffset
                report.events.append(.resumed(offset: deviceOffset))
            }
            if opening.ledger.rateStart == nil {
                opening.ledger.rateStart = RateStart(time: now, confirmed: min(deviceOffset, total))
            }
        }
        let pipeline = UploadWindow(total: total, deviceOffset: deviceOffset)
        report.events.append(
            .progress(
                progress(opening.ledger, confirmed: pipeline.confirmed, sent: opening.ledger.sentBefore, now: now)
            )
        )
        let session = Session(
            ledger: opening.ledger,
            pipeline: pipeline,
            lastAnswer: now,
            lastConfirmed: pipeline.confirmed
        )
        if pipeline.isFinished {
            // The progress above already says it; only the summary is left.
            if let summary = summary(session.ledger, sent: session.ledger.sentBefore) {
                report.notes.append(.summary(summary))
            }
            state = .finished
            return .finish(report)
        }
        state = .streaming(session)
        return .stream(report)
    }

    /// The offset of the next chunk to send, while the window has room (`nil`: wait for answers).
    /// Call ``chunkSent(start:size:)`` once it is on the link.
    mutating func nextChunk() -> Int? {
        guard case .streaming(var session) = state else { return nil }
        let pipeline = session.pipeline
        if pipeline.inFlight.isEmpty && !pipeline.hasMoreToSend && !pipeline.isFinished {
            // Everything sent was answered, yet the device wants more: send from its offset.
            state = .modifying
            session.pipeline.rewindToConfirmed()
            state = .streaming(session)
        }
        guard session.pipeline.inFlight.count < session.ledger.window.size, session.pipeline.hasMoreToSend else {
            return nil
        }
        return session.pipeline.next
    }

    /// The chunk ``nextChunk()`` gave is on the link.
    /// - Parameters:
    ///   - start: its offset.
    ///   - size: its data bytes (> 0).
    mutating func chunkSent(start: Int, size: Int) {
        guard case .streaming(var session) = state, start == session.pipeline.next, size > 0 else {
            preconditionFailure("chunkSent(start: \(start), size: \(size)) in \(state)")
        }
        state = .modifying
        _ = session.pipeline.send(size: size)
        state = .streaming(session)
    }

    /// The device answered a chunk with the offset it expects next.
    /// - Parameters:
    ///   - start: the chunk's offset.
    ///   - deviceOffset: the device's offset.
    ///   - roundTrip: from the chunk's send to its answer.
    ///   - now: the clock.
    mutating func chunkAnswered(start: Int, deviceOffset: Int, roundTrip: Duration, now: Duration) -> Action {
        let (taken, draining) = takeSession("chunkAnswered")
        var session = taken
        session.lastAnswer = now
        session.timeoutsInARow = 0
        session.roundTrip = (session.roundTrip * 7 + roundTrip) / 8
        session.answersWithoutProgress += 1
        var report = Report()
        switch session.pipeline.acknowledge(start: start, deviceOffset: deviceOffset) {
        case .finished:
            return finish(session, report: report, now: now)
        case .restart:
            if session.pipeline.sentEverything {
                state = .checkingCompletion(session, pauseAsked: draining)
                return .checkCompletion(report)
            }
            return sessionLost(session, report: report, draining: draining)
        case .proceed(let abandon):
            if !abandon.isEmpty {
                report.notes.append(.resynchronised(deviceOffset: deviceOffset, abandoned: abandon.count))
            }
            report.withdraw = abandon
            report.events.append(.progress(progress(session, now: now)))
        }
        return afterAnswer(session, draining: draining, report: report)
    }

    /// The device refused a chunk without processing it (`ENOMEM`, `EBUSY`): back-pressure.
    /// - Parameters:
    ///   - start: the chunk's offset.
    ///   - refusal: what it answered.
    ///   - now: the clock.
    mutating func chunkRefused(start: Int, _ refusal: Refusal, now: Duration) -> Action {
        let (taken, draining) = takeSession("chunkRefused")
        var session = taken
        session.lastAnswer = now
        session.timeoutsInARow = 0
        var report = Report()
        pushedBack(&session, at: start, refusal == .busy ? .busy : .outOfBuffers, report: &report)
        return afterAnswer(session, draining: draining, report: report)
    }

    /// A chunk got no answer within its timeout: lost on the way, or dropped by a device whose
    /// buffers were all held. Back-pressure — unless the device has been silent too long.
    /// - Parameters:
    ///   - start: the chunk's offset.
    ///   - now: the clock.
    mutating func chunkTimedOut(start: Int, now: Duration) -> Action {
        let (taken, draining) = takeSession("chunkTimedOut")
        var session = taken
        let silence = now - session.lastAnswer
        guard silence < configuration.silenceLimit else {
            state = .failed
            return .fail(Report(), .silent(silenceError(session, silence: silence)))
        }
        session.timeoutsInARow += 1
        var report = Report()
        pushedBack(&session, at: start, .noAnswer, report: &report)
        return afterAnswer(session, draining: draining, report: report)
    }

    /// A chunk failed otherwise (its request was cancelled, the link dropped, the device refused
    /// it for good). Fatal if the chunk still mattered and was not cancelled.
    /// - Parameters:
    ///   - start: the chunk's offset.
    ///   - cancelled: whether the failure is a cancellation.
    mutating func chunkFailed(start: Int, cancelled: Bool) -> Action {
        let (taken, draining) = takeSession("chunkFailed")
        var session = taken
        if session.pipeline.chunkFailed(start: start) && !cancelled {
            state = .failed
            return .fail(Report(), .chunkError)
        }
        return afterAnswer(session, draining: draining, report: Report())
    }

    /// The answer to ``Action/checkCompletion(_:)``.
    /// - Parameters:
    ///   - deviceHoldsUpload: whether the device lists the whole upload.
    ///   - now: the clock.
    mutating func completionChecked(deviceHoldsUpload: Bool, now: Duration) -> Action {
        guard case .checkingCompletion(let session, let pauseAsked) = state else {
            preconditionFailure("completionChecked in \(state)")
        }
        state = .modifying
        guard deviceHoldsUpload else { return sessionLost(session, report: Report(), draining: pauseAsked) }
        return finish(session, report: Report(notes: [.lastAnswerLost]), now: now)
    }

    /// The caller asks to pause: no new chunks; once those in flight are answered, the upload waits.
    /// - Parameter now: the clock.
    mutating func pause(now: Duration) -> Action {
        switch state {
        case .streaming(let session) where session.pipeline.inFlight.isEmpty:
            state = .paused(session.ledger)
            return .pause(Report())
        case .streaming(let session), .draining(let session):
            state = .draining(session)
            return .stream(Report())
        case .paused:
            return .pause(Report())
        default:
            preconditionFailure("pause() in \(state): control inputs are read only between answers")
        }
    }

    /// The caller asks to resume: a paused upload reopens its session (the device answers with its
    /// offset); a pause not yet in effect is called off.
    /// - Parameter now: the clock.
    mutating func resume(now: Duration) -> Action {
        switch state {
        case .paused(let ledger):
            state = .opening(Opening(ledger: ledger, afterPause: true))
            return .openSession(Report())
        case .streaming(let session), .draining(let session):
            state = .streaming(session)
            return .stream(Report())
        default:
            preconditionFailure("resume() in \(state): control inputs are read only between answers")
        }
    }
}
