import Foundation
import Logging
import SMPCore
import SMPLink

extension SMPClient {
    /// Uploads data in chunks that exactly fill the frame limit, keeping a window of requests
    /// in flight, and reports what happens.
    ///
    /// The session-opening chunk goes alone with a long timeout (the device may erase a whole
    /// slot first, or answer with the offset of an interrupted upload it can resume). Then
    /// chunks are pipelined; the device's answers drive everything (see `UploadWindow`):
    /// - the window starts at what ``TransferOptions/window`` forces, else at the device's
    ///   `buf_count − 1` (1, and frames within 384 bytes, when the device does not say); `ENOMEM`, `EBUSY` or a chunk without an answer halve it and sending
    ///   continues from the device's offset, and it grows back while answers flow. Back-pressure
    ///   alone never fails an upload; a device silent for the client's timeout × (retries + 1)
    ///   does;
    /// - an answer of offset 0 mid-transfer restarts the session; a refused chunk whose error
    ///   names the expected offset (FS) resumes there.
    ///
    /// Cancelling the consuming task cancels the upload.
    /// - Parameters:
    ///   - upload: what to upload and how to build its requests.
    ///   - options: window, alignment, timeouts.
    /// - Returns: the events; the sequence finishes when the device has confirmed every byte, or
    ///   throws the first fatal error (`SMPDeviceError`, `SMPTransportError`…).
    public nonisolated func upload<U: ChunkedUpload>(
        _ upload: U,
        options: TransferOptions = .init()
    ) -> AsyncThrowingStream<TransferEvent, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    try await self.runUpload(upload, options: options) { continuation.yield($0) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }

    /// Uploads and waits for completion, for callers that do not need the events.
    /// - Parameters:
    ///   - upload: what to upload.
    ///   - options: window, alignment, timeouts.
    /// - Returns: the final progress (bytes sent versus confirmed).
    /// - Throws: as ``upload(_:options:)``.
    @discardableResult
    public nonisolated func uploadAndWait<U: ChunkedUpload>(_ upload: U, options: TransferOptions = .init())
        async throws -> TransferProgress
    {
        var last: TransferProgress?
        for try await event in self.upload(upload, options: options) {
            if case .progress(let progress) = event { last = progress }
        }
        // A cancelled consumer's stream just ends: that is no finished upload.
        try Task.checkCancellation()
        return last
            ?? TransferProgress(bytesConfirmed: 0, totalBytes: upload.data.count, bytesSent: 0, bytesPerSecond: 0)
    }

    /// The window a transfer starts with and never exceeds: the one forced, else the device's
    /// `buf_count − 1` (its buffers hold requests and answers alike), else 1.
    ///
    /// A device that does not report its buffers may have one: MCUboot's serial recovery reads
    /// one message, handles it and only then reads again, and drops what arrives meanwhile — so
    /// an unknown device is not pipelined (`window` still forces it).
    func transferWindow(forced: Int?) -> AdaptiveWindow {
        if let forced { return AdaptiveWindow(initial: forced, ceiling: forced) }
        guard let count = deviceParameters?.bufferCount else { return AdaptiveWindow(initial: 1, ceiling: 1) }
        let fits = max(1, count - 1)
        return AdaptiveWindow(initial: fits, ceiling: fits)
    }

    private struct ChunkAnswer: Sendable {
        var start: Int
        /// Which sending of the chunk at `start` this answers; answers of a sending that was
        /// since replaced or abandoned are stale and ignored.
        var generation: Int
        var result: Result<Int, any Error>
        /// From the chunk's send to its answer.
        var roundTrip: Duration
    }

    private func runUpload<U: ChunkedUpload>(
        _ upload: U,
        options: TransferOptions,
        report: @Sendable (TransferEvent) -> Void
    ) async throws {
        let data = upload.data
        let total = data.count
        _ = try await loadParameters()
        // Without the device's buffer size, frames stay within what every device takes: a longer
        // one may be dropped without a word (MCUboot's serial recovery cannot decode it). A size
        // the user gave the link is theirs to answer for.
        let unknownDevice =
            deviceParameters == nil && !connection.frameSizeIsChosen ? Self.sizeFittingEveryDevice : Int.max
        let limit = min(options.maximumFrameSize ?? Int.max, maximumFrameSize, unknownDevice)
        var window = transferWindow(forced: options.window)
        let chunkTimeout = options.chunkTimeout ?? configuration.timeout
        // The longest the device may stay silent while chunks are re-sent: what the client's
        // timeout and retries promise for one request.
        let silenceLimit = chunkTimeout * (configuration.retries + 1)
        let clock = configuration.clock
        // Rates count from the opening chunk's answer (the slot erase is not transfer time) and
        // only the bytes this run confirmed (not those a resumed session already held).
        var rateStart: (time: Duration, confirmed: Int)?
        var sentBefore = 0
        var restarts = 0
        var changes: [WindowChange] = []
        let logger = transferLogger

        func progress(_ confirmed: Int, _ sent: Int) -> TransferProgress {
            var rate = 0.0
            if let rateStart {
                let elapsed = (clock.elapsed() - rateStart.time) / .seconds(1)
                if elapsed > 0 { rate = Double(confirmed - rateStart.confirmed) / elapsed }
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

        func adapt(_ size: Int?, from old: Int, _ reason: WindowChange.Reason) {
            guard let size, size != old else { return }
            let change = WindowChange(from: old, to: size, reason: reason)
            // Said once at -v; the rest (and the summary at the end) at -vv or in the summary.
            if changes.isEmpty {
                logger.debug("adapting the window to the device", metadata: ["change": "\(change)"])
            } else {
                logger.trace("window", metadata: ["change": "\(change)"])
            }
            changes.append(change)
            report(.windowChanged(change))
        }

        /// Counts a reopening of the session and reports why; past the limit the upload fails.
        /// - Parameters:
        ///   - reason: why the session is opened again.
        ///   - code: the failure's code.
        ///   - failure: the failure's message, given the number of reopenings.
        /// - Throws: ``SMPTransferError`` once the session was reopened more often than allowed.
        func restart(_ reason: String, failing code: SMPTransferError.Code, _ failure: (Int) -> String) throws {
            restarts += 1
            guard restarts <= options.maximumRestarts else { throw SMPTransferError(code, failure(restarts)) }
            report(.restarted(reason: reason))
        }

        func summarize(sent: Int, resumedAt: Int) {
            guard !changes.isEmpty else { return }
            let smallest = changes.map(\.to).min() ?? window.size
            let reasons = Dictionary(grouping: changes.filter { $0.reason != .answersFlowing }, by: \.reason)
                .map { "\($0.key) ×\($0.value.count)" }.sorted().joined(separator: ", ")
            logger.debug(
                "the window adapted to the device",
                metadata: [
                    "first": "\(changes[0].from)", "smallest": "\(smallest)", "final": "\(window.size)",
                    "why": "\(reasons)", "bytes_sent_again": "\(max(0, sent - (total - resumedAt)))",
                ]
            )
        }

        func chunkSize(at offset: Int, first: Bool) throws -> Int {
            let size = try ChunkSizing.dataSize(limit: limit, alignment: options.alignment, remaining: total - offset) {
                upload.request(offset: offset, data: $0, isFirst: first)
            }
            guard size > 0 || total == offset else {
                throw SMPTransportError.frameTooLarge(
                    size: nil,
                    limit: limit,
                    "an upload chunk with no data already exceeds the \(limit)-byte frame limit"
                )
            }
            return size
        }

        /// The device's next offset from an answer, or from a refusal that names it (FS). The
        /// answer that completes the upload is checked for the device's verdict on the data.
        @Sendable func offset(from answer: @Sendable () async throws -> U.Request.Response) async throws -> Int {
            do {
                let response = try await answer()
                let next = upload.nextOffset(from: response)
                if next >= total { try upload.checkCompletion(response) }
                return next
            } catch let error as SMPDeviceError {
                if let expected = upload.expectedOffset(after: error) { return expected }
                throw error
            }
        }

        func request(at offset: Int, size: Int, first: Bool) -> U.Request {
            upload.request(offset: offset, data: data.subdata(in: offset..<offset + size), isFirst: first)
        }

        var resumedAt = 0
        session: while true {
            // The session-opening chunk: offset 0 with the identifying fields; the device may
            // answer with a later offset when it resumes an interrupted upload.
            let firstSize = min(try chunkSize(at: 0, first: true), options.openingChunkLimit ?? Int.max)
            let opening = request(at: 0, size: firstSize, first: true)
            let resumed = try await offset { try await self.send(opening, timeout: options.firstChunkTimeout) }
            sentBefore += firstSize
            if resumed == 0 && firstSize > 0 {
                // The device kept nothing of the opening chunk; open the session again.
                try restart("the device kept nothing of the opening chunk", failing: .stalled) {
                    "the device accepted none of the first chunk \($0) times"
                }
                continue session
            }
            if resumed > firstSize {
                resumedAt = resumed
                logger.debug("the device resumes an interrupted upload", metadata: ["offset": "\(resumed)"])
                report(.resumed(offset: resumed))
            }
            if rateStart == nil { rateStart = (clock.elapsed(), min(resumed, total)) }
            var state = UploadWindow(total: total, deviceOffset: resumed)
            report(.progress(progress(state.confirmed, sentBefore)))
            if state.isFinished {
                summarize(sent: sentBefore, resumedAt: resumedAt)
                return
            }

            let (answers, sink) = AsyncStream.makeStream(of: ChunkAnswer.self)
            var tasks: [Int: (generation: Int, task: Task<Void, Never>)] = [:]
            var generation = 0
            defer { for entry in tasks.values { entry.task.cancel() } }
            var lastAnswer = clock.elapsed()
            // Smoothed round trip of a chunk, for the pause after back-pressure.
            var roundTrip = Duration.milliseconds(2)

            /// Back-pressure on the chunk at `start`: shrink the window and abandon what follows
            /// the chunk.
            /// - Returns: how long to pause, so the device works through the abandoned requests it
            ///   still holds before more are sent into its buffers.
            func pushedBack(at start: Int, _ pressure: AdaptiveWindow.Pressure) -> Duration {
                let old = window.size
                let reason: WindowChange.Reason =
                    switch pressure {
                    case .outOfBuffers: .deviceOutOfBuffers
                    case .busy: .deviceBusy
                    case .noAnswer: .noAnswer
                    }
                adapt(window.backPressure(pressure), from: old, reason)
                let abandoned = state.refused(start: start)
                for chunk in abandoned { tasks.removeValue(forKey: chunk)?.task.cancel() }
                let pause = min(.milliseconds(250), roundTrip * max(0, abandoned.count - 1))
                return pressure == .busy ? pause + configuration.busyBackoff : pause
            }

            var incoming = answers.makeAsyncIterator()
            // Answers since the confirmed offset last grew. A device that lost data it had
            // confirmed (a power cut, a reboot that kept part of the session) keeps asking for an
            // offset below ours; rather than resend forever, reopen the session, whose answer is
            // the device's own offset.
            var answersWithoutProgress = 0
            var lastConfirmed = state.confirmed
            while true {
                // Chunks are submitted one after another, so they leave in offset order; only
                // the waiting for their answers runs concurrently. Each is sent once: the engine,
                // not the client, decides what to send again.
                while state.inFlight.count < window.size && state.hasMoreToSend {
                    let size = try chunkSize(at: state.next, first: false)
                    let start = state.next
                    let pending = try await submit(
                        request(at: start, size: size, first: false),
                        timeout: chunkTimeout,
                        retries: 0,
                        resendingRefusals: false
                    )
                    _ = state.send(size: size)
                    generation += 1
                    let current = generation
                    tasks[start]?.task.cancel()
                    let sentAt = clock.elapsed()
                    let task = Task {
                        let result: Result<Int, any Error>
                        do {
                            result = .success(try await offset { try await pending.response() })
                        } catch {
                            result = .failure(error)
                        }
                        sink.yield(
                            ChunkAnswer(
                                start: start,
                                generation: current,
                                result: result,
                                roundTrip: clock.elapsed() - sentAt
                            )
                        )
                    }
                    tasks[start] = (current, task)
                }
                // Every chunk in flight must have a task that will report on it; one without is
                // treated as lost rather than waited for forever.
                for start in state.inFlight.keys where tasks[start] == nil {
                    logger.debug("a chunk lost its answer task; sending it again", metadata: ["offset": "\(start)"])
                    _ = state.chunkFailed(start: start)
                }
                if answersWithoutProgress > 2 * window.size + 8 {
                    logger.debug(
                        "the device stopped advancing; reopening the session",
                        metadata: ["confirmed": "\(state.confirmed)"]
                    )
                    let confirmed = state.confirmed
                    try restart("the device stopped advancing at offset \(confirmed)", failing: .stalled) { _ in
                        "the device stopped accepting data at offset \(confirmed)"
                    }
                    sentBefore += state.bytesSent
                    continue session
                }
                if state.inFlight.isEmpty && !state.hasMoreToSend && !state.isFinished {
                    // Everything sent was answered, yet the device wants more: send from its offset.
                    state.rewindToConfirmed()
                    continue
                }
                guard let answer = await incoming.next() else { break }
                try Task.checkCancellation()
                guard tasks[answer.start]?.generation == answer.generation else { continue }
                tasks[answer.start] = nil
                switch answer.result {
                case .success(let deviceOffset):
                    lastAnswer = clock.elapsed()
                    roundTrip = (roundTrip * 7 + answer.roundTrip) / 8
                    answersWithoutProgress += 1
                    switch state.acknowledge(start: answer.start, deviceOffset: deviceOffset) {
                    case .finished:
                        let sent = sentBefore + state.bytesSent
                        report(.progress(progress(total, sent)))
                        summarize(sent: sent, resumedAt: resumedAt)
                        return
                    case .restart:
                        if state.sentEverything, await upload.isComplete(on: self) {
                            // The last answer was lost and the device ended the finished session.
                            logger.debug("the device holds the whole upload; its last answer was lost")
                            let sent = sentBefore + state.bytesSent
                            report(.progress(progress(total, sent)))
                            summarize(sent: sent, resumedAt: resumedAt)
                            return
                        }
                        logger.debug("the device lost the upload session; opening it again")
                        try restart("the device answered offset 0 mid-transfer", failing: .sessionLost) {
                            "the device restarted the upload session \($0) times"
                        }
                        sentBefore += state.bytesSent
                        continue session
                    case .proceed(let abandon):
                        if !abandon.isEmpty {
                            logger.trace(
                                "resynchronising with the device",
                                metadata: ["device_offset": "\(deviceOffset)", "abandoned": "\(abandon.count)"]
                            )
                        }
                        for start in abandon { tasks.removeValue(forKey: start)?.task.cancel() }
                        report(.progress(progress(state.confirmed, sentBefore + state.bytesSent)))
                    }
                case .failure(let error as SMPDeviceError) where error.isTransientRefusal:
                    // Back-pressure: the device did not process the chunk, so nothing after it
                    // was written either. Shrink the window and continue from the chunk.
                    lastAnswer = clock.elapsed()
                    let pause = pushedBack(at: answer.start, error.returnCode == .busy ? .busy : .outOfBuffers)
                    if pause > .zero { try await clock.sleep(pause) }
                case .failure(let error as SMPTransportError) where error.code == .timeout:
                    // The chunk or its answer was lost — or the device, its buffers all held,
                    // dropped it. Shrink and send it again, unless the device has gone silent.
                    let silence = clock.elapsed() - lastAnswer
                    guard silence < silenceLimit else {
                        throw SMPTransportError(
                            .timeout,
                            "the device stopped answering at offset \(state.confirmed) of \(total): no answer for "
                                + "\(Self.seconds(silence)) s while chunks were sent again (\(configuration.retries + 1) "
                                + "timeouts of \(Self.seconds(chunkTimeout)) s)"
                        )
                    }
                    let pause = pushedBack(at: answer.start, .noAnswer)
                    if pause > .zero { try await clock.sleep(pause) }
                case .failure(let error):
                    if state.chunkFailed(start: answer.start) && !(error is CancellationError) { throw error }
                }
                if state.confirmed > lastConfirmed {
                    lastConfirmed = state.confirmed
                    answersWithoutProgress = 0
                    let old = window.size
                    adapt(window.answered(), from: old, .answersFlowing)
                }
            }
            try Task.checkCancellation()
            throw SMPTransportError(.disconnected, "the upload stopped before the device confirmed every byte")
        }
    }

    /// Seconds with one decimal, for messages.
    static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}
