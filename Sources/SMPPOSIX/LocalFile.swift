import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// Reads whole local files, regular or not, around two limits of swift-foundation on Linux
/// (Swift 6.3.1): `Data(contentsOf:)` keeps the 4 KiB buffer of every empty file it reads
/// (100,000 reads of an empty file grow a process by 400 MB; docs/RELIABILITY.md), and it refuses
/// a pipe with "permission denied" (so a shell's `<(curl …)` could not be read).
public enum LocalFile {
    /// The most a pipe or device is read: more than any flash holds, and a bound on `/dev/zero`.
    public static let streamLimit = 256 << 20

    /// The whole contents of a file: a regular file (an empty one answered without reading it),
    /// or a pipe, socket or device read to its end.
    /// - Parameters:
    ///   - url: the file (symbolic links followed).
    ///   - mapped: map a regular file into memory where that is safe, instead of copying it.
    /// - Returns: the bytes (empty for an empty file).
    /// - Throws: ``SystemCallError`` (`stat` for a missing file, `EISDIR` for a folder, `EFBIG` for a
    ///   stream longer than ``streamLimit``), or what `Data(contentsOf:)` and `FileHandle` throw;
    ///   ``FileErrorReason`` describes either.
    public static func read(_ url: URL, mapped: Bool = false) throws -> Data {
        var status = stat()
        guard stat(url.path, &status) == 0 else { throw SystemCallError.errno("stat", url.path) }
        switch status.st_mode & mode_t(S_IFMT) {
        case mode_t(S_IFREG):
            if status.st_size == 0 { return Data() }
            return try Data(contentsOf: url, options: mapped ? .mappedIfSafe : [])
        case mode_t(S_IFDIR):
            throw SystemCallError("read", url.path, code: EISDIR)
        default:
            return try readStream(url)
        }
    }

    private static func readStream(_ url: URL) throws -> Data {
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        var data = Data()
        while let chunk = try handle.read(upToCount: 64 << 10), !chunk.isEmpty {
            data.append(chunk)
            guard data.count <= streamLimit else {
                throw SystemCallError("read", url.path, code: EFBIG, reason: "longer than \(streamLimit >> 20) MiB")
            }
        }
        return data
    }
}
