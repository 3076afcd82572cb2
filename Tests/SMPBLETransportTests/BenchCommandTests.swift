import Foundation
import MCUmgrCommands
import Testing

@Suite struct BenchCommandTests {
    /// `mcumgr bench ble --json` reports the profile, its capacity and one result per window.
    @Test func benchBLEReportsModelledThroughput() async throws {
        let result = await MCUmgrCommand.run(arguments: [
            "bench", "ble", "--profile", "reassembly", "--window", "2", "--size", "20000", "--json",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let object = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(object["profile"] as? String == "reassembly")
        #expect(object["att_mtu"] as? Int == 498)
        let results = try #require(object["results"] as? [[String: Any]])
        #expect(results.count == 1)
        #expect(results.first?["window"] as? Int == 2)
        #expect(results.first?["frame_size"] as? Int == 2475)
        let capacity = try #require(object["capacity_bytes_per_second"] as? Double)
        let rate = try #require(results.first?["bytes_per_second"] as? Double)
        #expect(rate > 0 && rate <= capacity)
    }

    /// Without --window every window up to the device's buffer count runs; text output.
    @Test func benchBLEWithoutWindowRunsEveryWindow() async {
        let result = await MCUmgrCommand.run(arguments: ["bench", "ble", "--profile", "fast", "--size", "8000"])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = result.stdout.split(separator: "\n").filter { $0.hasPrefix("window ") }
        #expect(lines.count == 4)
        #expect(result.stdout.contains("(best)"))
    }

    /// An unknown profile is a usage error naming the valid ones.
    @Test func unknownProfileIsAUsageError() async {
        let result = await MCUmgrCommand.run(arguments: ["bench", "ble", "--profile", "nope"])
        #expect(result.status == 64)
        #expect(result.stderr.contains("legacy, fast, reassembly, coded"))
    }
}
