import Foundation

/// Reads whole local files without the leak swift-foundation has on Linux (Swift 6.3.1):
/// `Data(contentsOf:)` keeps the 4 KiB buffer of every empty file it reads (100,000 reads of an
/// empty file grow a process by 400 MB; docs/RELIABILITY.md). An empty file is answered without
/// reading it; errors are Foundation's, for ``FileErrorReason``.
public enum LocalFile {
    /// The whole contents of a file.
    /// - Parameters:
    ///   - url: the file.
    ///   - mapped: map the file into memory where that is safe, instead of copying it.
    /// - Returns: the bytes (empty for an empty file).
    /// - Throws: what `FileManager` or `Data(contentsOf:)` throws (missing, unreadable, a folder).
    public static func read(_ url: URL, mapped: Bool = false) throws -> Data {
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        if attributes[.type] as? FileAttributeType == .typeRegular, (attributes[.size] as? NSNumber)?.intValue == 0 {
            return Data()
        }
        return try Data(contentsOf: url, options: mapped ? .mappedIfSafe : [])
    }
}
