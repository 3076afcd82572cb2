import Foundation

/// Numbers as transfer messages say them.
enum TransferText {
    /// Seconds with one decimal.
    static func seconds(_ duration: Duration) -> String {
        String(format: "%.1f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }
}
