/// Whether a process may touch Bluetooth on an Apple platform: the system kills a process whose
/// Info.plist lacks `NSBluetoothAlwaysUsageDescription` at its first Bluetooth call (a
/// `CBCentralManager` or `CBPeripheralManager`), with no error the program could report. The
/// CoreBluetooth adapters ask this first and fail with one line instead.
///
/// Pure: the caller reads the main bundle (`Bundle.main.object(forInfoDictionaryKey:)`) and the
/// environment, so the decision and its message are tested on any platform.
public enum BluetoothUsageDescription {
    /// The Info.plist key CoreBluetooth requires (iOS 13, macOS 10.15 and later).
    public static let key = "NSBluetoothAlwaysUsageDescription"

    /// Set to `0` to skip the check: for a command-line tool the system asks the app that started
    /// it (e.g. Terminal) for the description, and that app may have one when the tool does not.
    public static let skipVariable = "MCUMGR_BLUETOOTH_USAGE_CHECK"

    /// The problem to report, or `nil` when Bluetooth may be used.
    /// - Parameters:
    ///   - value: the main bundle's value for ``key`` (`nil` when absent).
    ///   - isAppBundle: the main bundle is an application bundle (`.app`), not a bare executable.
    ///   - environment: the process environment (for ``skipVariable``).
    /// - Returns: one line naming the missing key and how to add it, or `nil`.
    public static func problem(value: Any?, isAppBundle: Bool, environment: [String: String]) -> String? {
        if environment[skipVariable] == "0" { return nil }
        // An empty or non-string description is as good as none to the system's check.
        if let text = value as? String, text.contains(where: { !$0.isWhitespace }) { return nil }
        if isAppBundle {
            return "this app's Info.plist has no \(key), and the system ends a process that uses Bluetooth "
                + "without one: add the key with a sentence saying why the app uses Bluetooth"
        }
        return "this program has no Info.plist with \(key), and the system may end a process that uses "
            + "Bluetooth without one: embed one when linking (-Xlinker -sectcreate -Xlinker __TEXT -Xlinker "
            + "__info_plist -Xlinker Info.plist), or set \(skipVariable)=0 if the app that starts it (e.g. "
            + "Terminal) has Bluetooth permission"
    }

    /// Throws ``problem(value:isAppBundle:environment:)`` as an ``SMPTransportError``
    /// `.unavailable`.
    /// - Parameters:
    ///   - value: the main bundle's value for ``key``.
    ///   - isAppBundle: the main bundle is an application bundle.
    ///   - environment: the process environment.
    /// - Throws: ``SMPTransportError`` `.unavailable` with that line.
    public static func check(value: Any?, isAppBundle: Bool, environment: [String: String]) throws {
        if let problem = problem(value: value, isAppBundle: isAppBundle, environment: environment) {
            throw SMPTransportError(.unavailable, problem)
        }
    }
}
