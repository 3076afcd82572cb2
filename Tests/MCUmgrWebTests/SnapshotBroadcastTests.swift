import Testing

@testable import MCUmgrWeb

/// Every tab of an operation gets the latest snapshot at once, every change after it, progress
/// held back within the interval but never lost, and the end.
@Suite struct SnapshotBroadcastTests {
    /// A snapshot stand-in: a number.
    static func collect(_ stream: AsyncStream<Int>) async -> [Int] {
        var received: [Int] = []
        for await value in stream { received.append(value) }
        return received
    }

    @Test func aTabGetsTheLatestThenEveryChangeThenTheEnd() async {
        let tabs = SnapshotBroadcast(0, interval: .seconds(3_600))
        tabs.publish(1)
        let stream = tabs.subscribe()
        tabs.publish(2)
        tabs.publish(3)
        tabs.finish(4)
        #expect(await Self.collect(stream) == [1, 2, 3, 4])
        // After the end: the last snapshot, and a stream that has ended; nothing more is sent.
        tabs.publish(5)
        #expect(await Self.collect(tabs.subscribe()) == [4])
        #expect(tabs.subscriberCount == 0)
    }

    /// Within the interval after a send, progress waits; the end carries the newest.
    @Test func progressWithinTheIntervalWaitsAndTheEndCarriesTheNewest() async {
        let tabs = SnapshotBroadcast(0, interval: .seconds(3_600))
        let stream = tabs.subscribe()
        tabs.publish(1, progressOnly: true)
        tabs.publish(2, progressOnly: true)
        tabs.publish(3, progressOnly: true)
        tabs.finish(4)
        #expect(await Self.collect(stream) == [0, 1, 4])
    }

    /// The last progress change goes out once the interval has passed, with nothing after it to
    /// carry it (bounded by its arrival, not by a duration).
    @Test func theLastProgressIsNeverLost() async {
        let tabs = SnapshotBroadcast(0, interval: .milliseconds(20))
        let stream = tabs.subscribe()
        tabs.publish(1, progressOnly: true)
        tabs.publish(2, progressOnly: true)
        var received: [Int] = []
        for await value in stream {
            received.append(value)
            if value == 2 { break }
        }
        #expect(received == [0, 1, 2])
        tabs.finish(3)
    }

    @Test func aTabThatGoesAwayIsForgotten() async {
        let tabs = SnapshotBroadcast(0, interval: .seconds(3_600))
        let stream = tabs.subscribe()
        #expect(tabs.subscriberCount == 1)
        let follower = Task { await Self.collect(stream) }
        follower.cancel()
        _ = await follower.value
        #expect(tabs.subscriberCount == 0)
        tabs.publish(1)
    }
}
