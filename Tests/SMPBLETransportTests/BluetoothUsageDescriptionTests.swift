import SMPLink
import Testing

/// The check made before the first CoreBluetooth call (a process without the description is
/// killed by the system there, with nothing to report).
@Suite struct BluetoothUsageDescriptionTests {
    /// A bare executable without the key is told how to embed an Info.plist, in one line.
    @Test func bareExecutableIsToldHowToEmbedAnInfoPlist() throws {
        let problem = try #require(
            BluetoothUsageDescription.problem(value: nil, isAppBundle: false, environment: [:])
        )
        #expect(problem.contains("NSBluetoothAlwaysUsageDescription"))
        #expect(problem.contains("-sectcreate -Xlinker __TEXT -Xlinker __info_plist"))
        #expect(problem.contains("MCUMGR_BLUETOOTH_USAGE_CHECK=0"))
        #expect(!problem.contains("\n"))
    }

    /// An app bundle without the key is told to add it, not to embed a property list.
    @Test func appBundleIsToldToAddTheKey() throws {
        let problem = try #require(
            BluetoothUsageDescription.problem(value: nil, isAppBundle: true, environment: [:])
        )
        #expect(problem.contains("this app's Info.plist has no NSBluetoothAlwaysUsageDescription"))
        #expect(!problem.contains("sectcreate"))
    }

    /// An empty, blank or non-string value is no description.
    @Test(arguments: ["", "  \t"] as [String])
    func blankDescriptionCountsAsMissing(text: String) {
        #expect(BluetoothUsageDescription.problem(value: text, isAppBundle: true, environment: [:]) != nil)
        #expect(BluetoothUsageDescription.problem(value: 42, isAppBundle: true, environment: [:]) != nil)
    }

    /// A description lets Bluetooth be used.
    @Test func descriptionPasses() throws {
        let value = "Updates the firmware of your devices."
        #expect(BluetoothUsageDescription.problem(value: value, isAppBundle: false, environment: [:]) == nil)
        try BluetoothUsageDescription.check(value: value, isAppBundle: true, environment: [:])
    }

    /// `MCUMGR_BLUETOOTH_USAGE_CHECK=0` skips the check (a tool whose launching app has permission);
    /// any other value does not.
    @Test func environmentSkipsOnlyWithZero() {
        #expect(
            BluetoothUsageDescription.problem(
                value: nil,
                isAppBundle: false,
                environment: ["MCUMGR_BLUETOOTH_USAGE_CHECK": "0"]
            ) == nil
        )
        #expect(
            BluetoothUsageDescription.problem(
                value: nil,
                isAppBundle: false,
                environment: ["MCUMGR_BLUETOOTH_USAGE_CHECK": "1"]
            ) != nil
        )
    }

    /// The failure is `.unavailable` and carries the line.
    @Test func checkThrowsUnavailable() {
        let error = #expect(throws: SMPTransportError.self) {
            try BluetoothUsageDescription.check(value: nil, isAppBundle: false, environment: [:])
        }
        #expect(error?.code == .unavailable)
        #expect(error?.message.contains("__info_plist") == true)
    }
}
