import Foundation
import Logging
import SMPCore

extension SMPClient {
    /// Uploads data in chunks that exactly fill the frame limit, keeping a window of requests
    /// in flight, and reports progress.
    ///
    /// The session-opening chunk goes alone with a long timeout (the device may erase a whole
    /// slot first, or answer with the offset of an interrupted upload it can resume). Then
    /// chunks are pipelined; the device's answers drive everything (see ``UploadWindow``). An
    /// answer of offset 0 mid-transfer restarts the session; a refused chunk whose error names
    /// the expected offset (FS) resumes there. Cancelling the consuming task cancels the upload.
    /// - Parameters:
    ///   - upload: what to upload and how to build its requests.
    ///   - options: window, alignment, timeouts.
    /// - Returns: progress updates; the sequence finishes when the device has confirmed every
    ///   byte, or throws the first fatal error (``SMPDeviceError``, ``SMPTransportError``…).
    public nonisolated func upload<U: ChunkedUpload>(
        _ upload: U,
        options: TransferOptions = .init()
    ) -> AsyncThrowingStream<TransferProgress, any Error> {
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

    /// Uploads and waits for completion, for callers that do not need progress.
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
        for try await progress in self.upload(upload, options: options) { last = progress }
        return last
            ?? TransferProgress(bytesConfirmed: 0, totalBytes: upload.data.count, bytesSent: 0, bytesPerSecond: 0)
    }

    private struct ChunkAnswer: Sendable {
        var start: Int
        /// Which sending of the chunk at `start` this answers; answers of a sending that was
        /// since replaced or abandoned are stale and ignored.
        var generation: Int
        var result: Result<Int, any Error>
    }

    private func runUpload<U: ChunkedUpload>(
        _ upload: U,
        options: TransferOptions,
        report: @Sendable (TransferProgress) -> Void
    ) async throws {
        let data = upload.data
        let total = data.count
        let limit = min(options.maximumFrameSize ?? Int.max, maximumFrameSize)
        let window = max(1, min(options.window, deviceParameters?.bufferCount ?? options.window))
        let clock = ContinuousClock()
        let started = clock.now
        var sentBefore = 0
        var restarts = 0

        func progress(_ confirmed: Int, _ sent: Int) -> TransferProgress {
            let elapsed = (clock.now - started) / .seconds(1)
            let rate = elapsed > 0 ? Double(confirmed) / elapsed : 0
            let eta: Duration? = rate > 0 ? .seconds(Double(total - confirmed) / rate) : nil
            return TransferProgress(
                bytesConfirmed: confirmed,
                totalBytes: total,
                bytesSent: sent,
                bytesPerSecond: rate,
                estimatedTimeRemaining: eta
            )
        }

        func chunkSize(at offset: Int, first: Bool) throws -> Int {
            let size = try ChunkSizing.dataSize(limit: limit, alignment: options.alignment, remaining: total - offset) {
                upload.request(offset: offset, data: $0, isFirst: first)
            }
            guard size > 0 || total == offset else {
                throw SMPTransportError(
                    .frameTooLarge,
                    "a \(U.Request.self) with no data already exceeds the \(limit)-byte frame limit"
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

        session: while true {
            // The session-opening chunk: offset 0 with the identifying fields; the device may
            // answer with a later offset when it resumes an interrupted upload.
            let firstSize = min(try chunkSize(at: 0, first: true), options.openingChunkLimit ?? Int.max)
            let opening = request(at: 0, size: firstSize, first: true)
            let resumed = try await offset { try await self.send(opening, timeout: options.firstChunkTimeout) }
            sentBefore += firstSize
            if resumed == 0 && firstSize > 0 {
                // The device kept nothing of the opening chunk; open the session again.
                restarts += 1
                guard restarts <= options.maximumRestarts else {
                    throw SMPTransportError(
                        .disconnected,
                        "the device accepted none of the first chunk \(restarts) times"
                    )
                }
                continue session
            }
            if resumed > firstSize {
                transferLogger.debug("the device resumes an interrupted upload", metadata: ["offset": "\(resumed)"])
            }
            var state = UploadWindow(total: total, deviceOffset: resumed)
            report(progress(state.confirmed, sentBefore))
            if state.isFinished { return }

            let (answers, sink) = AsyncStream.makeStream(of: ChunkAnswer.self)
            var tasks: [Int: (generation: Int, task: Task<Void, Never>)] = [:]
            var generation = 0
            defer { for entry in tasks.values { entry.task.cancel() } }

            var incoming = answers.makeAsyncIterator()
            // Answers since the confirmed offset last grew. A device that lost data it had
            // confirmed (a power cut, a reboot that kept part of the session) keeps asking for an
            // offset below ours; rather than resend forever, reopen the session, whose answer is
            // the device's own offset.
            var answersWithoutProgress = 0
            var lastConfirmed = state.confirmed
            while true {
                // Chunks are submitted one after another, so they leave in offset order; only
                // the waiting for their answers runs concurrently.
                while state.inFlight.count < window && state.hasMoreToSend {
                    let size = try chunkSize(at: state.next, first: false)
                    let start = state.next
                    let pending = try await submit(
                        request(at: start, size: size, first: false),
                        timeout: options.chunkTimeout
                    )
                    _ = state.send(size: size)
                    generation += 1
                    let current = generation
                    tasks[start]?.task.cancel()
                    let task = Task {
                        do {
                            let deviceOffset = try await offset { try await pending.response() }
                            sink.yield(ChunkAnswer(start: start, generation: current, result: .success(deviceOffset)))
                        } catch {
                            sink.yield(ChunkAnswer(start: start, generation: current, result: .failure(error)))
                        }
                    }
                    tasks[start] = (current, task)
                }
                // Every chunk in flight must have a task that will report on it; one without is
                // treated as lost rather than waited for forever.
                for start in state.inFlight.keys where tasks[start] == nil {
                    transferLogger.debug(
                        "a chunk lost its answer task; sending it again",
                        metadata: ["offset": "\(start)"]
                    )
                    _ = state.chunkFailed(start: start)
                }
                if answersWithoutProgress > 2 * window + 8 {
                    transferLogger.debug(
                        "the device stopped advancing; reopening the session",
                        metadata: ["confirmed": "\(state.confirmed)"]
                    )
                    restarts += 1
                    guard restarts <= options.maximumRestarts else {
                        throw SMPTransportError(
                            .disconnected,
                            "the device stopped accepting data at offset \(state.confirmed)"
                        )
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
                answersWithoutProgress += 1
                switch answer.result {
                case .success(let deviceOffset):
                    switch state.acknowledge(start: answer.start, deviceOffset: deviceOffset) {
                    case .finished:
                        report(progress(total, sentBefore + state.bytesSent))
                        return
                    case .restart:
                        transferLogger.debug("the device lost the upload session; opening it again")
                        restarts += 1
                        guard restarts <= options.maximumRestarts else {
                            throw SMPTransportError(
                                .disconnected,
                                "the device restarted the upload session \(restarts) times"
                            )
                        }
                        sentBefore += state.bytesSent
                        continue session
                    case .proceed(let abandon):
                        if !abandon.isEmpty {
                            transferLogger.debug(
                                "resynchronising with the device",
                                metadata: ["device_offset": "\(deviceOffset)", "abandoned": "\(abandon.count)"]
                            )
                        }
                        for start in abandon { tasks.removeValue(forKey: start)?.task.cancel() }
                        report(progress(state.confirmed, sentBefore + state.bytesSent))
                    }
                case .failure(let error):
                    if state.chunkFailed(start: answer.start) && !(error is CancellationError) { throw error }
                }
                tasks[answer.start] = nil
                if state.confirmed > lastConfirmed {
                    lastConfirmed = state.confirmed
                    answersWithoutProgress = 0
                }
            }
            try Task.checkCancellation()
            throw SMPTransportError(.disconnected, "the upload stopped before the device confirmed every byte")
        }
    }
}
