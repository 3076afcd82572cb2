import Foundation
import SMPCore
import SMPLink

/// Performs a ``DownloadStateMachine``'s actions over a client and feeds the answers back;
/// decides nothing. Takes every answer from one inbox, on the global executor (as
/// ``UploadDriver`` does, and for the same reason).
struct DownloadDriver {
    let client: SMPClient
    let name: String
    let timeout: Duration?
    let report: @Sendable (TransferProgress) -> Void
    let clock: SMPClock
    private let inbox = TransferInbox<DownloadAnswer>()
    private var machine: DownloadStateMachine
    /// Requests in flight: start offset → the tag their answers carry and the client's request.
    private var live: [Int: (tag: Int, request: Int)] = [:]
    private var nextTag = 0
    private var requestError: (any Error)?

    /// Prepares a download of `name`: reads the device's parameters (once per connection) for the
    /// window.
    init(
        name: String,
        options: TransferOptions,
        client: SMPClient,
        report: @escaping @Sendable (TransferProgress) -> Void
    ) async throws {
        self.client = client
        self.name = name
        self.report = report
        timeout = options.chunkTimeout
        clock = client.configuration.clock
        let started = clock.elapsed()
        _ = try await client.loadParameters()
        // Every answer holds one of the device's buffers while it is built, as requests do.
        machine = DownloadStateMachine(name: name, window: await client.transferWindow(forced: options.window).size)
        _ = machine.start(now: started)
    }

    /// Runs the download to its end.
    /// - Returns: the file's contents.
    mutating func run() async throws -> Data {
        defer { inbox.finish() }
        do {
            let data = try await inbox.reading { try await loop() }
            await withdrawAll()
            return data
        } catch {
            await withdrawAll()
            throw error
        }
    }

    private mutating func withdrawAll() async {
        for entry in live.values { await client.withdraw(entry.request) }
        live.removeAll()
    }

    private mutating func loop() async throws -> Data {
        let first = try await client.send(FileManagement.Download(offset: 0, name: name), timeout: timeout)
        var action = machine.firstAnswered(
            length: first.length,
            offset: Int(clamping: first.offset),
            data: first.data,
            now: clock.elapsed()
        )
        while true {
            switch action {
            case .requestFirst:
                preconditionFailure("the first request is sent before the loop")
            case .request(let step):
                await perform(step)
                try await fill()
                action = try await nextAnswer()
            case .finish(let step, let data):
                await perform(step)
                return data
            case .fail(.invalidResponse(let error)):
                throw error
            case .fail(.requestError):
                throw requestError ?? SMPTransportError(.disconnected, "a download request failed without an error")
            }
        }
    }

    private mutating func perform(_ step: DownloadStateMachine.Report) async {
        for start in step.withdraw {
            if let entry = live.removeValue(forKey: start) { await client.withdraw(entry.request) }
        }
        if let progress = step.progress { report(progress) }
    }

    /// Sends requests while the window has room; the client retries each after timeouts and
    /// busy answers, as it does any read.
    private mutating func fill() async throws {
        while let (start, size) = machine.nextRequest() {
            nextTag += 1
            let tag = nextTag
            let inbox = self.inbox
            let id = try await client.submit(
                FileManagement.Download(offset: UInt64(start), name: name),
                timeout: timeout ?? client.configuration.timeout,
                retries: client.configuration.retries,
                resendingRefusals: true
            ) { inbox.yield(DownloadAnswer(start: start, tag: tag, result: $0)) }
            live[start] = (tag, id)
            machine.requestSent(start: start, size: size)
        }
    }

    /// Waits for the next answer of a request in flight and hands it to the machine.
    private mutating func nextAnswer() async throws -> DownloadStateMachine.Action {
        while true {
            guard let answer = await inbox.next() else {
                try Task.checkCancellation()
                throw SMPTransportError(.disconnected, "the download of \(name) stopped before every byte arrived")
            }
            try Task.checkCancellation()
            guard live[answer.start]?.tag == answer.tag else { continue }
            live[answer.start] = nil
            switch answer.result {
            case .success(let response):
                return machine.answered(
                    start: answer.start,
                    offset: Int(clamping: response.offset),
                    data: response.data,
                    now: clock.elapsed()
                )
            case .failure(let error):
                requestError = error
                return machine.failed(start: answer.start, cancelled: error is CancellationError)
            }
        }
    }
}

/// The answer of one download request.
struct DownloadAnswer: Sendable {
    var start: Int
    var tag: Int
    var result: Result<FileManagement.Download.Response, any Error>
}
