import Foundation
import MCUmgr
import SMPCBOR
import SMPCore
import SMPTestSupport
import Testing

/// The progress an upload reports, timed on a manual clock: the rate and the ETA leave out the
/// wait for the opening chunk (the device erases the slot), and after a resume count only the
/// bytes this run sent.
@Suite struct SMPClientUploadProgressTests {
    static let total = 12_000

    /// A device that answers every chunk with the offset after it; the clock moves `erase` while
    /// the opening chunk is handled and one second for every chunk after it.
    static func device(clock: ManualClock, erase: Duration, resumeAt: Int? = nil) -> ScriptedConnection {
        ScriptedConnection(maximumFrameSize: 1024, parameters: .buffers(size: 1024, count: 2)) { request in
            guard let map = try? request.payloadValue().mapValue, let offset = map["off"]?.uint64Value,
                let data = map["data"]?.dataValue
            else { return [] }
            if offset == 0 {
                clock.advance(by: erase)
                return [ScriptedConnection.reply(request, ["off": CBOR(resumeAt ?? data.count)])]
            }
            clock.advance(by: .seconds(1))
            return [ScriptedConnection.reply(request, ["off": CBOR(Int(offset) + data.count)])]
        }
    }

    static func progress(_ connection: ScriptedConnection, clock: ManualClock) async throws -> [TransferProgress] {
        let client = SMPClient(
            connection: connection,
            configuration: .init(timeout: .seconds(30), retries: 0, firstSequence: 0, clock: SMPClock(clock))
        )
        await client.start()
        let upload = ImageUpload(data: Data(repeating: 0x5a, count: total), sha256: Data(repeating: 1, count: 32))
        var progress: [TransferProgress] = []
        for try await event in client.upload(upload) {
            if case .progress(let step) = event { progress.append(step) }
        }
        await client.close()
        return progress
    }

    @Test("the slot erase behind the opening chunk is not transfer time: no ETA of hours at 0 %")
    func eraseIsLeftOut() async throws {
        let clock = ManualClock()
        let connection = Self.device(clock: clock, erase: .seconds(600))
        let progress = try await Self.progress(connection, clock: clock)
        let opening = try #require(progress.first).bytesConfirmed
        let last = try #require(progress.last)
        #expect(last.bytesConfirmed == Self.total)
        // One second a chunk after the opening one: the rate is what those chunks carried.
        let chunks = connection.sent.count - 2  // less the parameters request and the opening chunk
        #expect(last.bytesPerSecond == Double(Self.total - opening) / Double(chunks))
        for step in progress.dropFirst() where step.bytesConfirmed < Self.total {
            let eta = try #require(step.estimatedTimeRemaining)
            // What is left at the chunks' pace: never the erase's 600 s.
            #expect(eta < .seconds(Double(Self.total - step.bytesConfirmed) / 600) + .seconds(chunks))
        }
        #expect(progress.first?.estimatedTimeRemaining == nil)
    }

    @Test("after a resume the rate counts only the bytes this run sent")
    func resumedRateCountsThisRun() async throws {
        let clock = ManualClock()
        let resumeAt = 9_000
        let connection = Self.device(clock: clock, erase: .zero, resumeAt: resumeAt)
        let progress = try await Self.progress(connection, clock: clock)
        let last = try #require(progress.last)
        #expect(last.bytesConfirmed == Self.total)
        let chunks = connection.sent.count - 2
        #expect(chunks > 0)
        #expect(last.bytesPerSecond == Double(Self.total - resumeAt) / Double(chunks))
    }
}

/// A device that does not report its buffers gets frames every device takes, unless the user
/// chose the link's frame size (a serial `mtu=`).
@Suite struct SMPClientUploadFrameSizeTests {
    static func largestChunkFrame(linkSizeChosen: Bool) async throws -> Int {
        let connection = ScriptedConnection(
            maximumFrameSize: 1024,
            frameSizeIsChosen: linkSizeChosen,
            parameters: .notSupported
        ) { request in
            guard let map = try? request.payloadValue().mapValue, let offset = map["off"]?.uint64Value,
                let data = map["data"]?.dataValue
            else { return [] }
            return [ScriptedConnection.reply(request, ["off": CBOR(Int(offset) + data.count)])]
        }
        let client = SMPClient(connection: connection, configuration: .init(timeout: .seconds(5), retries: 0))
        await client.start()
        let upload = ImageUpload(data: Data(repeating: 0x5a, count: 5_000), sha256: Data(repeating: 1, count: 32))
        for try await _ in client.upload(upload) {}
        await client.close()
        let chunks = connection.sent.filter { $0.header.group == .image && $0.header.command == 1 }
        #expect(chunks.count > 1)
        return chunks.map(\.bytes.count).max() ?? 0
    }

    @Test("no parameters: frames of at most 384 bytes; with the link's size chosen, up to it")
    func chosenLinkSizeIsTrusted() async throws {
        #expect(try await Self.largestChunkFrame(linkSizeChosen: false) <= 384)
        let chosen = try await Self.largestChunkFrame(linkSizeChosen: true)
        #expect(chosen > 384 && chosen <= 1024)
    }
}

/// The upload driver times its chunks out itself, with one timer for all of them (issue 23: a
/// watchdog task per chunk in the client was a large share of an upload's CPU). Timed on a manual
/// clock that the test moves only while the upload waits on it.
@Suite struct SMPClientUploadTimeoutTests {
    @Test(
        "a chunk whose answer is lost times out on the driver's timer and is sent again; no timer is left behind",
        .timeLimit(.minutes(1))
    )
    func aLostAnswerTimesOutAndTheChunkIsSentAgain() async throws {
        let clock = ManualClock()
        var lostOnce = false
        let connection = ScriptedConnection(maximumFrameSize: 1024, parameters: .buffers(size: 1024, count: 2)) {
            request in
            guard let map = try? request.payloadValue().mapValue, let offset = map["off"]?.uint64Value,
                let data = map["data"]?.dataValue
            else { return [] }
            // The answer to the second chunk after the opening one is lost, once.
            if offset > 0 && !lostOnce && request.header.sequence == 3 {
                lostOnce = true
                return []
            }
            return [ScriptedConnection.reply(request, ["off": CBOR(Int(offset) + data.count)])]
        }
        let client = SMPClient(
            connection: connection,
            configuration: .init(timeout: .seconds(5), retries: 2, firstSequence: 0, clock: SMPClock(clock))
        )
        await client.start()
        let upload = ImageUpload(data: Data(repeating: 0x5a, count: 5_000), sha256: Data(repeating: 1, count: 32))
        let finished = Task {
            try await client.uploadAndWait(upload, options: TransferOptions(window: 1))
        }
        // With a window of one, nothing moves after the lost answer but the clock: the chunk's
        // deadline is five seconds after it was sent.
        await connection.waitUntilSent { sent in sent.contains { $0.header.sequence == 3 } }
        for _ in 0..<100_000 where clock.sleeperCount == 0 { await Task.yield() }
        try #require(clock.sleeperCount > 0, "nothing waits on the clock")
        clock.advance(by: .seconds(5))
        let progress = try await finished.value
        #expect(progress.bytesConfirmed == 5_000)
        #expect(lostOnce)
        let chunkOffsets = connection.sent.filter { $0.header.group == .image && $0.header.command == 1 }
            .compactMap { try? $0.payloadValue()["off"]?.uint64Value }
        // Every offset once, the one whose answer was lost twice.
        #expect(chunkOffsets.count == Set(chunkOffsets).count + 1)
        #expect(progress.bytesSent > 5_000)
        // The timer ended with the upload: nothing sleeps on the clock any more.
        #expect(clock.sleeperCount == 0)
        await client.close()
    }
}
