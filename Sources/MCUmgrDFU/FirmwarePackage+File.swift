import Foundation
import MCUboot
import SMPPOSIX

extension FirmwarePackage {
    /// Reads a package from a file and parses it (`MCUboot` itself parses bytes and reads no file).
    ///
    /// Regular files are mapped; pipes (a shell's `<(…)`) are read to their end.
    /// - Parameter url: the file.
    /// - Throws: `MCUbootError` (`MCUbootError.Code.readFailed` if the file cannot be read), or
    ///   what `FirmwarePackage.init(data:fileName:)` throws for its contents.
    public init(contentsOf url: URL) throws(MCUbootError) {
        let data: Data
        do {
            data = try LocalFile.read(url, mapped: true)
        } catch {
            throw MCUbootError(.readFailed, "cannot read \(url.path): \(FileErrorReason.describe(error))", cause: error)
        }
        try self.init(data: data, fileName: url.lastPathComponent)
    }
}
