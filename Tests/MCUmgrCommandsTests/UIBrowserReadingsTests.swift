import Foundation
import SMPTestSupport
import Testing

/// A screen of `mcumgr ui` shows the device's answer to its own read, never an earlier one's:
/// connected to another device, the first one's readings go; a read that fails leaves the error
/// line alone, with nothing of an earlier reading beneath it. Not in `UIBrowserTests`' serialized
/// suite: its silent reads wait out their timeouts, beside those tests rather than after them.
@Suite struct UIBrowserReadingsTests {
    /// One screen's read as the driver saw it end: what the region showed, and the alert line.
    struct Read {
        let shown: Any
        let alert: String

        init(_ value: Any?) throws {
            let read = try #require(value as? [String: Any], "not a read: \(String(describing: value))")
            shown = try #require(read["shown"])
            alert = try #require(read["alert"] as? String)
        }

        /// Whether the region showed nothing: no text, no rows, no options.
        var isEmpty: Bool {
            switch shown {
            case let text as String: text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            case let items as [Any]: items.isEmpty
            default: false
            }
        }
    }

    static func reads(_ value: Any?) throws -> [String: Read] {
        let reads = try #require(value as? [String: Any], "no reads: \(String(describing: value))")
        return try reads.mapValues(Read.init)
    }

    @Test(Peers.needed("playwright", "chromium"))
    func aSilentDeviceLeavesNoEarlierReadingOnAnyScreen() async throws {
        // Two seconds an answer, four attempts: a silent device's read fails in 8 s, not 12.
        let bench = try await UIBrowserTests.Bench.start(count: 0, uiOptions: ["--device-timeout", "2"])
        defer { bench.stop() }
        let shown = try await bench.drive("silent")
        let devices = try #require(shown["devices"] as? [[String]])
        try #require(devices.count == 2, "\(devices)")

        let first = try Self.reads(shown["first"])
        #expect(Set(first.keys) == ["device", "images", "groups", "stats", "setting", "value"])
        for (screen, read) in first {
            #expect(read.alert == "", "\(screen): \(read)")
            #expect(!read.isEmpty, "\(screen) showed nothing of a device that answers")
        }
        #expect((first["device"]?.shown as? String)?.contains("Bootloader") == true, "\(shown)")
        #expect((first["images"]?.shown as? [[String]])?.first?.prefix(3) == ["0", "0", "1.0.0"], "\(shown)")
        #expect(first["setting"]?.shown as? String == "app/greeting: from sim-001")
        #expect(first["value"]?.shown as? String == "from sim-001")

        // Connected to sim-002: its info, and none of sim-001's readings on screens not read again.
        let switched = try #require(shown["switched"] as? [String: Any])
        #expect(switched["alert"] as? String == "", "\(switched)")
        #expect((switched["shown"] as? String)?.contains("Bootloader") == true, "\(switched)")
        #expect((switched["current"] as? String)?.hasPrefix("Device \(devices[1][1]) ") == true, "\(switched)")
        #expect(switched["setting"] as? String == "", "sim-001's setting shown for sim-002: \(switched)")

        // sim-002 silent: every screen read again shows the error line over an empty region.
        let silent = try Self.reads(shown["silent"])
        #expect(Set(silent.keys) == ["device", "images", "groups", "stats", "setting", "value"])
        for (screen, read) in silent {
            #expect(read.isEmpty, "\(screen) kept an earlier reading under its error: \(read.shown)")
            #expect(read.alert.hasPrefix("no answer to "), "\(screen): \(read.alert)")
            #expect(read.alert.hasSuffix("or raise mcumgr ui's --device-timeout"), "\(screen): \(read.alert)")
        }

        let recovered = try Read(shown["recovered"])
        #expect(recovered.alert == "", "\(recovered)")
        #expect((recovered.shown as? String)?.contains("Bootloader") == true, "\(recovered)")
    }
}
