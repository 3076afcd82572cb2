import Foundation

/// The reason a file operation failed, in the system's words, without Foundation's
/// `NSCocoaErrorDomain … UserInfo={…}` dump.
public enum FileErrorReason {
    /// Describes a file error for a person, e.g. `No such file or directory`.
    /// - Parameter error: what `Data(contentsOf:)`, `FileManager`, `write(to:)` or ``LocalFile`` threw.
    /// - Returns: one short phrase.
    public static func describe(_ error: any Error) -> String {
        if let system = error as? SystemCallError { return system.reason }
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain
        {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if nsError.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(nsError.code))) }
        switch nsError.code {
        case NSFileNoSuchFileError, NSFileReadNoSuchFileError: return String(cString: strerror(ENOENT))
        case NSFileWriteNoPermissionError, NSFileReadNoPermissionError: return String(cString: strerror(EACCES))
        case NSFileWriteOutOfSpaceError: return String(cString: strerror(ENOSPC))
        case NSFileWriteVolumeReadOnlyError: return String(cString: strerror(EROFS))
        case NSFileReadCorruptFileError, NSFileReadUnknownError: return "the file could not be read"
        case NSFileWriteUnknownError: return "the file could not be written"
        default: return nsError.localizedDescription
        }
    }

    /// Whether the error means the file is not there (as opposed to unreadable or bad).
    /// - Parameter error: a file error.
    public static func isMissing(_ error: any Error) -> Bool {
        if let system = error as? SystemCallError { return system.code == ENOENT }
        let nsError = error as NSError
        if let underlying = nsError.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain
        {
            return underlying.code == Int(ENOENT)
        }
        if nsError.domain == NSPOSIXErrorDomain { return nsError.code == Int(ENOENT) }
        return nsError.code == NSFileNoSuchFileError || nsError.code == NSFileReadNoSuchFileError
    }
}
