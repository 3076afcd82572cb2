import Foundation
import SMPTestSupport
import Testing

/// Starts ``PoolWatchdog`` for the whole run when `MCUMGR_TEST_STALL_LOG` asks for it
/// (docs/RELIABILITY.md, "Finding a stall"); its log exists from the start.
@Suite struct PoolWatchdogTests {
    static let log = ProcessInfo.processInfo.environment["MCUMGR_TEST_STALL_LOG"] ?? ""

    @Test(.enabled(if: !log.isEmpty, "MCUMGR_TEST_STALL_LOG is not set: no stall watch in this run"))
    func startsWhenAskedFor() {
        PoolWatchdog.startIfRequested()
        #expect(FileManager.default.fileExists(atPath: Self.log))
    }
}
