/// Whether a process may touch Bluetooth on an Apple platform: the system kills a process whose
/// Info.plist lacks `NSBluetoothAlwaysUsageDescription` at its first Bluetooth call (a
/// `CBCentralManager` or `CBPeripheralManager`), with no error the program could report. The
/// CoreBluetooth adapters ask this first and fail with one line instead.
///
/// A command-line tool without an Info.plist of its own is not refused: macOS then asks the app
/// responsible for it (the terminal that started it), which is how `mcumgr` is meant to be run.
///
/// Pure: the caller reads the main bundle, so the decision and its message are tested on any
/// platform.
public enum BluetoothUsageDescription {
    /// The Info.plist key CoreBluetooth requires (iOS 13, macOS 10.15 and later).
    public static let key = "NSBluetoothAlwaysUsageDescription"

    /// The problem to report, or `nil` when Bluetooth may be used.
    /// - Parameters:
    ///   - value: the main bundle's value for ``key`` (`nil` when absent).
    ///   - hasInfoPlist: whether the main bundle has an Info.plist (an app, or a tool with one
    ///     embedded; `Bundle.main.bundleIdentifier != nil`).
    /// - Returns: one line naming the missing key and how to add it, or `nil`.
    public static func problem(value: Any?, hasInfoPlist: Bool) -> String? {
        guard hasInfoPlist else { return nil }
        // An empty or non-string description is as good as none to the system's check.
        if let text = value as? String, text.contains(where: { !$0.isWhitespace }) { return nil }
        return "this program's Info.plist has no \(key), and the system ends a process that uses Bluetooth "
            + "without one: add the key with a sentence saying why the program uses Bluetooth"
    }

    /// Throws ``problem(value:hasInfoPlist:)`` as an ``SMPTransportError`` `.unavailable`.
    /// - Parameters:
    ///   - value: the main bundle's value for ``key``.
    ///   - hasInfoPlist: whether the main bundle has an Info.plist.
    /// - Throws: ``SMPTransportError`` `.unavailable` with that line.
    public static func check(value: Any?, hasInfoPlist: Bool) throws {
        if let problem = problem(value: value, hasInfoPlist: hasInfoPlist) {
            throw SMPTransportError(.unavailable, problem)
        }
    }
}
