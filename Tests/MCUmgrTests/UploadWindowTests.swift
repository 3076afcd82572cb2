import Testing

@testable import MCUmgr

struct UploadWindowTests {
    /// A window of four 100-byte chunks over 1000 bytes, after a first chunk of 100.
    func started() -> UploadWindow {
        var window = UploadWindow(total: 1000, deviceOffset: 100)
        for _ in 0..<4 { _ = window.send(size: 100) }
        return window
    }

    @Test func inOrderAnswersAdvance() {
        var window = started()
        #expect(window.acknowledge(start: 100, deviceOffset: 200) == .proceed(abandon: []))
        #expect(window.confirmed == 200)
        #expect(window.next == 500)
    }

    @Test func aLaterAckCoversALostOne() {
        var window = started()
        // The answer to 100..<200 was lost; 200..<300 answers 300, which covers it.
        #expect(window.acknowledge(start: 200, deviceOffset: 300) == .proceed(abandon: [100]))
        #expect(window.confirmed == 300)
        #expect(window.inFlight.keys.sorted() == [300, 400])
    }

    @Test func aLostRequestIsResentAsSoonAsALaterChunkReportsTheGap() {
        var window = started()
        // 100..<200 never reached the device, so 200..<300 is answered with "expected 100".
        #expect(window.acknowledge(start: 200, deviceOffset: 100) == .proceed(abandon: [100, 300, 400]))
        #expect(window.next == 100)
        #expect(window.inFlight.isEmpty)
        // The other stale answers (already abandoned) change nothing.
        #expect(window.acknowledge(start: 300, deviceOffset: 100) == .proceed(abandon: []))
        #expect(window.next == 100)
    }

    @Test func aTrimmedWriteRewindsToTheDevicesOffset() {
        var window = started()
        #expect(window.acknowledge(start: 100, deviceOffset: 196) == .proceed(abandon: [200, 300, 400]))
        #expect(window.next == 196)
        #expect(window.confirmed == 196)
    }

    @Test func reorderedAnswersDoNotRewind() {
        var window = started()
        #expect(window.acknowledge(start: 200, deviceOffset: 300) == .proceed(abandon: [100]))
        // The answer to 100 arrives late, after 200's: it reports 200, below what is confirmed.
        #expect(window.acknowledge(start: 100, deviceOffset: 200) == .proceed(abandon: []))
        #expect(window.confirmed == 300)
        #expect(window.next == 500)
    }

    @Test func offsetZeroMidTransferRestartsTheSession() {
        var window = started()
        #expect(window.acknowledge(start: 100, deviceOffset: 0) == .restart)
    }

    @Test func theLastByteFinishes() {
        var window = UploadWindow(total: 250, deviceOffset: 100)
        _ = window.send(size: 100)
        _ = window.send(size: 50)
        #expect(!window.hasMoreToSend)
        #expect(window.acknowledge(start: 200, deviceOffset: 250) == .finished)
    }

    @Test func failedChunksMatterOnlyAboveTheConfirmedOffset() {
        var window = started()
        _ = window.acknowledge(start: 200, deviceOffset: 300)
        let coveredMatters = window.chunkFailed(start: 100)
        let pendingMatters = window.chunkFailed(start: 300)
        #expect(!coveredMatters && pendingMatters)
    }

    /// ENOMEM, EBUSY or silence on a chunk: it was not written, so nothing after it was either;
    /// everything from it on is abandoned and sending starts again there.
    @Test func aRefusedChunkAbandonsItAndWhatFollows() {
        var window = started()
        #expect(window.refused(start: 200) == [200, 300, 400])
        #expect(window.next == 200)
        #expect(window.inFlight.keys.sorted() == [100])
        // A chunk refused after the device confirmed past it changes nothing.
        _ = window.acknowledge(start: 100, deviceOffset: 200)
        var ahead = started()
        _ = ahead.acknowledge(start: 200, deviceOffset: 300)
        #expect(ahead.refused(start: 100) == [])
        #expect(ahead.next == 500)
    }

    @Test func aDeviceAheadOfUsSkipsForward() {
        var window = started()
        #expect(window.acknowledge(start: 100, deviceOffset: 700) == .proceed(abandon: [200, 300, 400]))
        #expect(window.next == 700)
    }
}
