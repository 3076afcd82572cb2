import Foundation
import Testing

@testable import MCUmgrCommands

/// `mcumgr bench ble` through the CLI (the model itself is tested in SMPBLETransportTests).
@Suite struct BenchCommandTests {
    /// The report's keys are snake_case like every other verb's.
    @Test func jsonKeysAreSnakeCase() async throws {
        let result = await CLI.run(["bench", "ble", "--profile", "fast", "--window", "1", "--size", "4096", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try CLI.json(result.stdout)
        #expect(
            Set(object.keys) == [
                "profile", "phy", "att_mtu", "data_length", "connection_interval_ms", "packets_per_event",
                "reassembly", "buf_size", "buf_count", "capacity_bytes_per_second", "link_layer_bytes_per_second",
                "results", "best_window",
            ]
        )
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(
            Set(results.first?.keys.map { $0 } ?? []) == [
                "window", "bytes", "frame_size", "seconds", "bytes_per_second", "fraction_of_capacity",
            ]
        )
        #expect(object["best_window"] as? Int == 1)
    }

    @Test func aNegativeWindowIsARangeError() async {
        let result = await CLI.run(["bench", "ble", "--window", "-1"])
        #expect(result.status == 64)
        #expect(result.stderr == "error: --window must be at least 1\n")
    }
}
