import Foundation

/// How a finished transfer is said to people — by `mcumgr fs`, `mcumgr upgrade` and the web
/// page alike, so the same transfer reads the same everywhere.
extension TransferProgress {
    /// Bytes for people: `512 B`, `12.3 KiB`, `1.50 MiB`.
    /// - Parameter count: a byte count.
    public static func byteText(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        if count < 1024 * 1024 { return String(format: "%.1f KiB", Double(count) / 1024) }
        return String(format: "%.2f MiB", Double(count) / (1024 * 1024))
    }

    /// A duration for people: `28 ms` under a second, `1.4 s` from there.
    /// - Parameter elapsed: the duration.
    public static func durationText(_ elapsed: Duration) -> String {
        let secs = seconds(elapsed)
        return secs < 1 ? "\(Int((secs * 1000).rounded())) ms" : String(format: "%.1f s", secs)
    }

    /// How long a transfer took and how fast it went: `4.6 KiB in 0.3 s (15.2 KiB/s)`. Under a
    /// tenth of a second there is no rate: what a transfer that short measures is the round
    /// trip, not a speed.
    /// - Parameters:
    ///   - count: the bytes moved.
    ///   - elapsed: how long it took.
    public static func completionText(bytes count: Int, elapsed: Duration) -> String {
        let secs = seconds(elapsed)
        let rate = secs >= 0.1 ? " (\(byteText(Int(Double(count) / secs)))/s)" : ""
        return "\(byteText(count)) in \(durationText(elapsed))" + rate
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
