import Foundation
import MCUmgr
import Testing

@testable import MCUmgrWeb

@Suite struct FileTransferOperationTests {
    /// The transfer runs on its own; its progress reaches the snapshot, a download keeps its
    /// contents, and a tab that subscribes afterwards gets the final snapshot.
    @Test func aDownloadKeepsItsContentsAndALateTabSeesTheEnd() async throws {
        let contents = Data("hello".utf8)
        let operation = FileTransferOperation(kind: .download, path: "/lfs1/a.txt", total: 5, environment: .init()) {
            _,
            report in
            await report(TransferProgress(bytesConfirmed: 2, totalBytes: 5, bytesSent: 2, bytesPerSecond: 10))
            return contents
        }
        await operation.start()
        var seen: [OperationSnapshot] = []
        for await snapshot in await operation.subscribe() { seen.append(snapshot) }
        let last = try #require(seen.last)
        #expect(last.kind == "download")
        #expect(last.status == "succeeded")
        #expect(last.progress?.bytes == 5)
        #expect(last.progress?.percent == 100)
        #expect(last.result.first?.hasPrefix("downloaded /lfs1/a.txt: 5 B in ") == true)
        #expect(await operation.contents == contents)
        var late: [OperationSnapshot] = []
        for await snapshot in await operation.subscribe() { late.append(snapshot) }
        #expect(late == [last])
    }

    /// A failure is one line in the environment's words; a download cannot be paused.
    @Test func aFailureIsOneLineAndADownloadDoesNotPause() async throws {
        let operation = FileTransferOperation(
            kind: .download,
            path: "/lfs1/a.txt",
            total: nil,
            environment: .init(describe: { "said: \($0)" })
        ) { _, _ in
            throw SMPTransportError(.disconnected, "gone")
        }
        await #expect(throws: WebError.self) { try await operation.pause() }
        await operation.start()
        var last: OperationSnapshot?
        for await snapshot in await operation.subscribe() { last = snapshot }
        #expect(last?.status == "failed")
        #expect(last?.error?.hasPrefix("said: ") == true)
        #expect(last?.steps.last?.outcome == "failed")
        #expect(last?.activity == "a download of /lfs1/a.txt")
    }
}
