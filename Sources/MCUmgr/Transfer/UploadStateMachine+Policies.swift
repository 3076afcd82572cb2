import SMPLink

// The upload's policies, shared by the event methods: back-pressure, growth, the stall limit,
// restarts, the end, and the numbers reported on the way.
extension UploadStateMachine {
    /// The session of a state that takes chunk answers, leaving `.modifying` behind.
    /// - Parameter event: the event's name, for the trap.
    /// - Returns: the session, and whether a pause was asked for.
    mutating func takeSession(_ event: String) -> (Session, draining: Bool) {
        switch state {
        case .streaming(let session):
            state = .modifying
            return (session, false)
        case .draining(let session):
            state = .modifying
            return (session, true)
        default:
            preconditionFailure("\(event) in \(state): only chunks in flight are answered")
        }
    }

    /// After any answer: grow the window if the upload moved forward, reopen a stalled session,
    /// and pause once a pause asked for has nothing left in flight.
    mutating func afterAnswer(_ session: Session, draining: Bool, report: Report) -> Action {
        var session = session
        var report = report
        if session.pipeline.confirmed > session.lastConfirmed {
            session.lastConfirmed = session.pipeline.confirmed
            session.answersWithoutProgress = 0
            let old = session.ledger.window.size
            adapt(&session.ledger, session.ledger.window.answered(), from: old, .answersFlowing, report: &report)
        }
        if session.answersWithoutProgress > 2 * session.ledger.window.size + 8 {
            let confirmed = session.pipeline.confirmed
            report.notes.append(.stoppedAdvancing(confirmed: confirmed))
            return restartSession(
                session,
                reason: "the device stopped advancing at offset \(confirmed)",
                failing: .stalled,
                draining: draining,
                report: report
            ) { _ in "the device stopped accepting data at offset \(confirmed)" }
        }
        return continueSession(session, draining: draining, report: report)
    }

    /// Keeps streaming, or pauses once nothing asked for is in flight.
    private mutating func continueSession(_ session: Session, draining: Bool, report: Report) -> Action {
        if draining && session.pipeline.inFlight.isEmpty {
            state = .paused(session.ledger)
            return .pause(report)
        }
        state = draining ? .draining(session) : .streaming(session)
        return .stream(report)
    }

    /// Back-pressure on the chunk at `start`: shrink the window, abandon the chunk and what
    /// follows it (the device takes only the offset it expects, so nothing after a refused chunk
    /// was written), and pause so the device works through the abandoned requests it still holds.
    mutating func pushedBack(
        _ session: inout Session,
        at start: Int,
        _ pressure: AdaptiveWindow.Pressure,
        report: inout Report
    ) {
        let old = session.ledger.window.size
        let reason: WindowChange.Reason =
            switch pressure {
            case .outOfBuffers: .deviceOutOfBuffers
            case .busy: .deviceBusy
            case .noAnswer: .noAnswer
            }
        adapt(&session.ledger, session.ledger.window.backPressure(pressure), from: old, reason, report: &report)
        let abandoned = session.pipeline.refused(start: start)
        report.withdraw += abandoned
        var pause = min(.milliseconds(250), session.roundTrip * max(0, abandoned.count - 1))
        if pressure == .outOfBuffers && old == 1 {
            // Nothing else was abandoned, yet the device's buffers are held (by another client, or
            // by requests abandoned earlier): wait one round trip rather than ask again at once.
            pause = max(pause, session.roundTrip)
        }
        report.pause = pressure == .busy ? pause + configuration.busyBackoff : pause
    }

    /// Records a window change and reports it.
    func adapt(
        _ ledger: inout Ledger,
        _ size: Int?,
        from old: Int,
        _ reason: WindowChange.Reason,
        report: inout Report
    ) {
        guard let size, size != old else { return }
        let change = WindowChange(from: old, to: size, reason: reason)
        ledger.changes.append(change)
        report.events.append(.windowChanged(change))
    }

    /// The device answered offset 0 mid-transfer and does not hold the upload: reopen.
    mutating func sessionLost(_ session: Session, report: Report, draining: Bool) -> Action {
        var report = report
        report.notes.append(.sessionLost)
        return restartSession(
            session,
            reason: "the device answered offset 0 mid-transfer",
            failing: .sessionLost,
            draining: draining,
            report: report
        ) { "the device restarted the upload session \($0) times" }
    }

    /// Closes a session and opens the next (or, when a pause was asked for, waits for the
    /// resume, which opens it).
    mutating func restartSession(
        _ session: Session,
        reason: String,
        failing code: SMPTransferError.Code,
        draining: Bool,
        report: Report,
        failure: (Int) -> String
    ) -> Action {
        var ledger = session.ledger
        ledger.sentBefore += session.pipeline.bytesSent
        var report = report
        report.withdraw += session.pipeline.inFlight.keys.sorted()
        let action = restart(ledger, reason: reason, failing: code, report: report, failure: failure)
        guard draining, case .openSession(let opened) = action, case .opening(let opening) = state else {
            return action
        }
        state = .paused(opening.ledger)
        return .pause(opened)
    }

    /// Counts a reopening of the session and reports why; past the limit the upload fails.
    mutating func restart(
        _ ledger: Ledger,
        reason: String,
        failing code: SMPTransferError.Code,
        report: Report,
        failure: (Int) -> String
    ) -> Action {
        var ledger = ledger
        ledger.restarts += 1
        guard ledger.restarts <= configuration.maximumRestarts else {
            state = .failed
            return .fail(report, .transfer(SMPTransferError(code, failure(ledger.restarts))))
        }
        var report = report
        report.events.append(.restarted(reason: reason))
        state = .opening(Opening(ledger: ledger))
        return .openSession(report)
    }

    /// Every byte is confirmed: the last progress, and the summary for the log.
    mutating func finish(_ session: Session, report: Report, now: Duration) -> Action {
        var report = report
        let ledger = session.ledger
        let total = configuration.total
        let sent = ledger.sentBefore + session.pipeline.bytesSent
        let rate = progress(ledger, confirmed: total, sent: sent, now: now)
        report.events.append(.progress(rate))
        if let summary = summary(ledger, sent: sent) { report.notes.append(.summary(summary)) }
        state = .finished
        return .finish(report)
    }

    /// The progress of a session.
    func progress(_ session: Session, now: Duration) -> TransferProgress {
        progress(
            session.ledger,
            confirmed: session.pipeline.confirmed,
            sent: session.ledger.sentBefore + session.pipeline.bytesSent,
            now: now
        )
    }

    /// Progress with the rate since the rate's start and the time left at that rate.
    func progress(_ ledger: Ledger, confirmed: Int, sent: Int, now: Duration) -> TransferProgress {
        let total = configuration.total
        var rate = 0.0
        if let start = ledger.rateStart {
            let elapsed = (now - start.time) / .seconds(1)
            if elapsed > 0 { rate = Double(confirmed - start.confirmed) / elapsed }
        }
        let eta: Duration? = rate > 0 ? .seconds(Double(total - confirmed) / rate) : nil
        return TransferProgress(
            bytesConfirmed: confirmed,
            totalBytes: total,
            bytesSent: sent,
            bytesPerSecond: rate,
            estimatedTimeRemaining: eta
        )
    }

    /// How the window adapted, if it changed at all.
    func summary(_ ledger: Ledger, sent: Int) -> Summary? {
        guard let first = ledger.changes.first else { return nil }
        let smallest = ledger.changes.map(\.to).min() ?? ledger.window.size
        let reasons = Dictionary(grouping: ledger.changes.filter { $0.reason != .answersFlowing }, by: \.reason)
            .map { "\($0.key) ×\($0.value.count)" }.sorted().joined(separator: ", ")
        return Summary(
            first: first.from,
            smallest: smallest,
            final: ledger.window.size,
            reasons: reasons,
            bytesSentAgain: max(0, sent - (configuration.total - ledger.resumedAt))
        )
    }

    /// The failure of a device silent for the silence limit.
    func silenceError(_ session: Session, silence: Duration) -> SMPTransportError {
        SMPTransportError(
            .timeout,
            "the device stopped answering at offset \(session.pipeline.confirmed) of \(configuration.total): "
                + "no answer for \(TransferText.seconds(silence)) s while chunks were sent again "
                + "(\(session.timeoutsInARow) timeouts in a row, the wait growing from "
                + "\(TransferText.seconds(configuration.chunkTimeout)) s to \(TransferText.seconds(chunkTimeout(session))) s)"
        )
    }
}
