import Foundation
import SMPCBOR
import SMPCore
import Testing

@testable import MCUmgr

/// The pipelined FS download (``SMPClient/download(name:options:)``) against a scripted
/// device, and its reassembly state machine on its own.
struct DownloadTests {
    /// A file of `count` bytes with a recognisable pattern.
    static func file(_ count: Int) -> Data { Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }) }

    /// A client over a scripted connection, first sequence 0, short timeouts.
    func client(_ connection: ScriptedConnection, retries: Int = 1) async -> SMPClient {
        let client = SMPClient(
            connection: connection,
            configuration: .init(timeout: .milliseconds(300), retries: retries, firstSequence: 0)
        )
        await client.start()
        return client
    }

    /// A fake device that reports Zephyr's usual parameters (the client reads them before the
    /// first transfer) and answers everything else through `script`.
    static func device(
        parameters: ScriptedConnection.Parameters = .buffers(size: 2048, count: 4),
        _ script: @escaping (SMPFrame) -> [[UInt8]]
    ) -> ScriptedConnection {
        ScriptedConnection(parameters: parameters, script: script)
    }

    /// The offsets of the download requests sent, in order (other requests left out).
    static func downloadOffsets(_ connection: ScriptedConnection) -> [UInt64] {
        downloadOffsets(from: connection.sent)
    }

    /// The offsets of the download requests among `frames`, in order.
    static func downloadOffsets(from frames: [SMPFrame]) -> [UInt64] {
        frames.compactMap { try? $0.decodeRequest(as: FileManagement.Download.self).offset }
    }

    /// A Zephyr-like FS download answer: `chunk` bytes from `off` (`len` at offset 0).
    static func answer(_ request: SMPFrame, file: Data, chunk: Int) -> [UInt8] {
        guard let download = try? request.decodeRequest(as: FileManagement.Download.self) else { return [] }
        let offset = Int(download.offset)
        guard offset <= file.count else {
            return ScriptedConnection.reply(request, ["err": ["group": 8, "rc": 12]])
        }
        let end = min(file.count, offset + chunk)
        var map: CBORMap = ["off": CBOR(offset), "data": .byteString(file.subdata(in: offset..<end))]
        if offset == 0 { map.append(key: "len", value: CBOR(file.count)) }
        return ScriptedConnection.reply(request, .map(map))
    }

    func download(_ client: SMPClient, window: Int = 4) async throws -> (data: Data, progress: [TransferProgress]) {
        var progress: [TransferProgress] = []
        for try await event in client.download(name: "/lfs1/f", options: TransferOptions(window: window)) {
            switch event {
            case .progress(let update): progress.append(update)
            case .finished(let data): return (data, progress)
            }
        }
        try Task.checkCancellation()
        Issue.record("the stream ended without .finished")
        return (Data(), progress)
    }

    @Test(arguments: [0, 1, 99, 100, 101, 1000, 4097])
    func everyLengthArrivesWhole(length: Int) async throws {
        let file = Self.file(length)
        let connection = Self.device { [Self.answer($0, file: file, chunk: 100)] }
        let client = await client(connection)
        let (data, progress) = try await download(client)
        #expect(data == file)
        #expect(progress.last?.bytesConfirmed == length)
        #expect(progress.last?.totalBytes == length)
        // One request per chunk: nothing is asked twice when every answer arrives. Compared sorted:
        // the requests of a window are sent from their own tasks, in no set order.
        let offsets = Self.downloadOffsets(connection)
        #expect(offsets.sorted() == Array(stride(from: 0, to: max(length, 1), by: 100)).map(UInt64.init))
        await client.close()
    }

    @Test func anEmptyFileIsDoneAfterTheFirstAnswer() async throws {
        let connection = Self.device { [Self.answer($0, file: Data(), chunk: 100)] }
        let client = await client(connection)
        let (data, progress) = try await download(client)
        #expect(data.isEmpty)
        #expect(Self.downloadOffsets(connection) == [0])
        #expect(progress.map(\.fraction) == [1])
        await client.close()
    }

    @Test(.timeLimit(.minutes(10)))
    func requestsArePipelinedUpToTheWindow() async throws {
        let file = Self.file(1000)
        let held = LockedFrames()
        // Answer the first request at once; hold the others to see how many are in flight.
        let connection = Self.device { request in
            let offset = (try? request.decodeRequest(as: FileManagement.Download.self).offset) ?? 0
            if offset == 0 { return [Self.answer(request, file: file, chunk: 100)] }
            held.append(request)
            return []
        }
        let client = await client(connection, retries: 0)
        let task = Task { try await download(client, window: 3) }
        await connection.waitUntilSent { Self.downloadOffsets(from: $0).count(where: { $0 != 0 }) >= 3 }
        // Nothing is answered any more, so the window can never move: after the download has
        // ended, what was held is everything the client ever sent beyond the first request.
        task.cancel()
        _ = try? await task.value
        #expect(held.count == 3)
        #expect(
            held.all.compactMap { try? $0.decodeRequest(as: FileManagement.Download.self).offset }.sorted() == [
                100, 200, 300,
            ]
        )
        await client.close()
    }

    @Test func answersOutOfOrderArePlacedAtTheirOffsets() async throws {
        let file = Self.file(1000)
        let held = LockedFrames()
        // Hold requests and answer them in reverse, three at a time.
        let connection = Self.device { request in
            let offset = (try? request.decodeRequest(as: FileManagement.Download.self).offset) ?? 0
            if offset == 0 { return [Self.answer(request, file: file, chunk: 100)] }
            held.append(request)
            guard held.count % 3 == 0 || offset >= 900 else { return [] }
            return held.all.suffix(3).reversed().map { Self.answer($0, file: file, chunk: 100) }
        }
        let client = await client(connection, retries: 3)
        let (data, _) = try await download(client, window: 3)
        #expect(data == file)
        await client.close()
    }

    @Test func aShortAnswerLeavesAGapThatIsRequestedAgain() async throws {
        let file = Self.file(500)
        let shortened = Counter()
        // The answer at 200 carries only 40 bytes, once: the rest of that range must be asked for.
        let connection = Self.device { request in
            let offset = (try? request.decodeRequest(as: FileManagement.Download.self).offset) ?? 0
            if offset == 200 && shortened.increment() == 1 { return [Self.answer(request, file: file, chunk: 40)] }
            return [Self.answer(request, file: file, chunk: 100)]
        }
        let client = await client(connection)
        let (data, _) = try await download(client)
        #expect(data == file)
        let offsets = Self.downloadOffsets(connection)
        #expect(offsets.contains(240))
        await client.close()
    }

    @Test func aLostAnswerIsRetriedByTheClient() async throws {
        let file = Self.file(800)
        let dropped = Counter()
        let connection = Self.device { request in
            let offset = (try? request.decodeRequest(as: FileManagement.Download.self).offset) ?? 0
            if offset == 300 && dropped.increment() == 1 { return [] }
            return [Self.answer(request, file: file, chunk: 100)]
        }
        let client = await client(connection, retries: 2)
        let (data, _) = try await download(client)
        #expect(data == file)
        await client.close()
    }

    @Test func aLargerLaterChunkWidensTheStride() async throws {
        // Zephyr's first answer is smaller (it also carries len); later ones carry more.
        let file = Self.file(1000)
        let connection = Self.device { request in
            let offset = (try? request.decodeRequest(as: FileManagement.Download.self).offset) ?? 0
            return [Self.answer(request, file: file, chunk: offset == 0 ? 90 : 150)]
        }
        let client = await client(connection)
        let (data, _) = try await download(client, window: 1)
        #expect(data == file)
        let offsets = Self.downloadOffsets(connection)
        #expect(offsets == [0, 90, 240, 390, 540, 690, 840, 990])
        await client.close()
    }

    @Test func aRefusalIsThrown() async throws {
        let connection = Self.device { [ScriptedConnection.reply($0, ["err": ["group": 8, "rc": 3]])] }
        let client = await client(connection)
        await #expect {
            _ = try await client.downloadAndWait(name: "/lfs1/missing")
        } throws: { error in
            (error as? SMPDeviceError)?.matches(FileManagement.ReturnCode.fileNotFound) == true
        }
        await client.close()
    }

    @Test func anAnswerWithoutLengthIsMalformed() async throws {
        let connection = Self.device {
            [ScriptedConnection.reply($0, ["off": 0, "data": .byteString(Data([1, 2]))])]
        }
        let client = await client(connection)
        await #expect(throws: SMPError.self) { _ = try await client.downloadAndWait(name: "/lfs1/f") }
        await client.close()
    }

    @Test func aDeviceThatStopsSendingDataFails() async throws {
        let file = Self.file(300)
        let connection = Self.device { request in
            let offset = (try? request.decodeRequest(as: FileManagement.Download.self).offset) ?? 0
            return [Self.answer(request, file: file, chunk: offset == 0 ? 100 : 0)]
        }
        let client = await client(connection)
        await #expect(throws: SMPError.self) { _ = try await client.downloadAndWait(name: "/lfs1/f") }
        await client.close()
    }

    // MARK: - The device's parameters

    @Test func theParametersAreReadOnceBeforeTheFirstRequest() async throws {
        let file = Self.file(300)
        let connection = Self.device { [Self.answer($0, file: file, chunk: 100)] }
        let client = await client(connection)
        #expect(try await download(client).data == file)
        #expect(try await download(client).data == file)
        let commands = connection.sent.map { "\($0.header.group.rawValue)/\($0.header.command)" }
        #expect(commands == ["0/6"] + Array(repeating: "8/0", count: 6))
        await client.close()
    }

    @Test func theDefaultWindowIsOneBelowTheDevicesBufferCount() async throws {
        let connection = Self.device(parameters: .buffers(size: 2048, count: 4)) { _ in [] }
        let client = await client(connection)
        #expect(try await client.loadParameters()?.bufferCount == 4)
        #expect(await client.transferWindow(forced: nil).size == 3)
        #expect(await client.transferWindow(forced: 7).size == 7)
        await client.close()
    }

    @Test func aDeviceThatDoesNotReportParametersIsDownloadedOneRequestAtATime() async throws {
        let file = Self.file(1000)
        let connection = Self.device(parameters: .notSupported) { [Self.answer($0, file: file, chunk: 100)] }
        let client = await client(connection)
        // The default window: none forced.
        var received: Data?
        for try await event in client.download(name: "/lfs1/f") {
            if case .finished(let data) = event { received = data }
        }
        #expect(received == file)
        #expect(await client.transferWindow(forced: nil).size == 1)
        #expect(Self.downloadOffsets(connection) == Array(stride(from: 0, to: 1000, by: 100)).map(UInt64.init))
        await client.close()
    }

    @Test func aDeviceThatNeverAnswersTheParametersRequestTimesOutBeforeAnyDownloadRequest() async throws {
        let file = Self.file(100)
        // A silent device is unreachable, not small: the client does not guess its buffers.
        let connection = Self.device(parameters: .scripted) { request in
            request.header.group == .os ? [] : [Self.answer(request, file: file, chunk: 100)]
        }
        let client = await client(connection)
        await #expect(throws: SMPTransportError(.timeout)) { _ = try await client.downloadAndWait(name: "/lfs1/f") }
        #expect(Self.downloadOffsets(connection).isEmpty)
        await client.close()
    }

    // MARK: - The state machine alone

    @Test func assemblyMergesRangesAndFindsGaps() throws {
        var state = DownloadAssembly(length: 10)
        try state.place(offset: 0, data: Data([0, 1, 2]), requestedAt: 0)
        #expect(state.stride == 3)
        #expect(state.nextRequest()! == (3, 3))
        try state.place(offset: 6, data: Data([6, 7, 8]), requestedAt: 6)
        // The gap 3..<6 comes first, then 9..<10.
        #expect(state.nextRequest()! == (3, 3))
        state.request(start: 3, size: 3)
        #expect(state.nextRequest()! == (9, 1))
        try state.place(offset: 3, data: Data([3, 4, 5]), requestedAt: 3)
        try state.place(offset: 9, data: Data([9]), requestedAt: 9)
        #expect(state.isComplete)
        #expect(state.receivedRanges == [0..<10])
        #expect(state.data == Data(0..<10))
    }

    @Test func assemblyDropsRequestsCoveredByOtherAnswers() throws {
        var state = DownloadAssembly(length: 20)
        try state.place(offset: 0, data: Data(count: 4), requestedAt: 0)
        state.request(start: 4, size: 4)
        state.request(start: 8, size: 4)
        // The device answers the request at 4 with 8 bytes, covering the one at 8.
        try state.place(offset: 4, data: Data(count: 8), requestedAt: 4)
        #expect(state.abandonCovered() == [8])
        #expect(state.inFlight.isEmpty)
        #expect(state.nextRequest()! == (12, 8))
    }

    @Test func assemblyIgnoresBytesBeyondTheLength() throws {
        var state = DownloadAssembly(length: 4)
        try state.place(offset: 2, data: Data([2, 3, 4, 5]), requestedAt: 2)
        try state.place(offset: 0, data: Data([0, 1]), requestedAt: 0)
        #expect(state.isComplete)
        #expect(state.data == Data([0, 1, 2, 3]))
    }
}
