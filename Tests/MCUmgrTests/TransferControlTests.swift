import Foundation
import MCUmgr
import SMPCore
import SMPSimulator
import Testing

/// Pause and resume of a running upload (`TransferControl`), end to end through the real client
/// and engine into the simulated device.
@Suite struct TransferControlTests {
    @Test(.timeLimit(.minutes(10)))
    func aPausedUploadSendsNothingUntilResumedThenContinuesFromTheDevicesOffset() async throws {
        let device = await UploadUnderFaultsTests.device(faults: [])
        let counter = DataCounter()
        let client = try await UploadUnderFaultsTests.client(device, counter: counter, timeout: .seconds(5))
        let control = TransferControl()
        let size = UploadUnderFaultsTests.size
        var pausedAt: Int?
        var sentWhilePaused = 0
        var last: TransferProgress?
        for try await event in client.upload(UploadUnderFaultsTests.upload, control: control) {
            guard case .progress(let progress) = event else { continue }
            last = progress
            guard pausedAt == nil, progress.bytesConfirmed > size / 4 else { continue }
            control.pause()
            await control.waitUntilPaused()
            let before = counter.total
            // Nothing is in flight now: a request answered after it shows that no chunk went out
            // meanwhile (the device answers in the order it receives).
            _ = try await client.send(OSManagement.Echo(text: "still here"))
            sentWhilePaused = counter.total - before
            pausedAt = progress.bytesConfirmed
            control.resume()
        }
        #expect(pausedAt.map { $0 < size } == true)
        #expect(sentWhilePaused == 0)
        #expect(last?.bytesConfirmed == size)
        #expect(Data((await UploadUnderFaultsTests.secondarySlot(device)).prefix(size)) == UploadUnderFaultsTests.file)
        // Sent twice: only the reopened session's opening chunk, which the device discards as it
        // resumes at its offset.
        #expect(counter.total - size <= 512)
        await client.close()
    }

    @Test func waitingForAPauseNotAskedForReturnsAtOnce() async {
        let control = TransferControl()
        await control.waitUntilPaused()
        #expect(!control.isPaused)
        control.pause()
        // No upload uses it: every upload (none) has stopped.
        await control.waitUntilPaused()
        #expect(control.isPaused)
    }
}
