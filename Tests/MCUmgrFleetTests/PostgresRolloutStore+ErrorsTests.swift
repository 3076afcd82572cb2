import MCUmgrFleet
import Testing

@testable import MCUmgrFleetPostgres

/// The backstop for a connection that neither answers nor fails: no database needed.
struct PostgresDeadlineTests {
    @Test func aTransactionThatNeverEndsIsGivenUpWithOneLine() async throws {
        let gaveUp = AsyncStream<Void>.makeStream()
        await #expect(throws: RolloutStoreError("PostgreSQL at h:1 did not answer")) {
            try await PostgresRolloutStore.withDeadline(
                .milliseconds(10),
                message: "PostgreSQL at h:1 did not answer",
                giveUp: { gaveUp.continuation.yield() },
                body: {
                    // Never returns by itself: only the cancellation the deadline sends ends it.
                    try await Task.sleep(for: .seconds(86_400))
                    return 0
                }
            )
        }
        var iterator = gaveUp.stream.makeAsyncIterator()
        #expect(await iterator.next() != nil)
    }

    @Test func aTransactionThatEndsGivesItsValue() async throws {
        let value = try await PostgresRolloutStore.withDeadline(
            .seconds(86_400),
            message: "x",
            giveUp: {},
            body: { 42 }
        )
        #expect(value == 42)
        await #expect(throws: RolloutStoreError("the body's own")) {
            try await PostgresRolloutStore.withDeadline(
                .seconds(86_400),
                message: "x",
                giveUp: {},
                body: { () -> Int in throw RolloutStoreError("the body's own") }
            )
        }
    }
}
