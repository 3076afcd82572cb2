import SMPLink
import Testing

/// The check made before the first CoreBluetooth call (a process whose Info.plist lacks the
/// description is killed by the system there, with nothing to report).
@Suite struct BluetoothUsageDescriptionTests {
    /// A program with an Info.plist but without the key is told to add it, in one line.
    @Test func anInfoPlistWithoutTheKeyIsRefusedInOneLine() throws {
        let problem = try #require(BluetoothUsageDescription.problem(value: nil, hasInfoPlist: true))
        #expect(problem.hasPrefix("this program's Info.plist has no NSBluetoothAlwaysUsageDescription"))
        #expect(!problem.contains("\n"))
    }

    /// A bare command-line tool is not refused: macOS asks the app responsible for it (the
    /// terminal), and refusing would break `mcumgr` run from a terminal that has permission.
    @Test func aToolWithoutAnInfoPlistIsLeftToTheSystem() {
        #expect(BluetoothUsageDescription.problem(value: nil, hasInfoPlist: false) == nil)
    }

    /// An empty, blank or non-string value is no description.
    @Test(arguments: ["", "  \t"] as [String])
    func blankDescriptionCountsAsMissing(text: String) {
        #expect(BluetoothUsageDescription.problem(value: text, hasInfoPlist: true) != nil)
        #expect(BluetoothUsageDescription.problem(value: 42, hasInfoPlist: true) != nil)
    }

    /// A description lets Bluetooth be used.
    @Test func descriptionPasses() throws {
        try BluetoothUsageDescription.check(value: "Updates the firmware of your devices.", hasInfoPlist: true)
    }

    /// The failure is `.unavailable` and carries the line.
    @Test func checkThrowsUnavailable() {
        let error = #expect(throws: SMPTransportError.self) {
            try BluetoothUsageDescription.check(value: nil, hasInfoPlist: true)
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("NSBluetoothAlwaysUsageDescription") == true)
    }
}
