#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// A failed system call: which call, on what, and the `errno` it left.
///
/// Every throwing API of this module throws this one type, so callers can wrap it as the cause
/// of their own error (a transport's `connectionFailed`, say) without losing the detail.
public struct SystemCallError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The call that failed, e.g. `bind` or `getaddrinfo`.
    public var operation: String
    /// What it was applied to, e.g. `127.0.0.1:1337` or `/dev/ttyACM0`.
    public var subject: String
    /// The `errno` value (or the `getaddrinfo` code, negated, for name lookups).
    public var code: Int32
    /// The system's text for the code.
    public var reason: String

    /// Creates an error.
    /// - Parameters:
    ///   - operation: the call that failed.
    ///   - subject: what it was applied to.
    ///   - code: the error number.
    ///   - reason: the explanation; by default `strerror(code)`.
    public init(_ operation: String, _ subject: String, code: Int32, reason: String? = nil) {
        self.operation = operation
        self.subject = subject
        self.code = code
        self.reason = reason ?? String(cString: strerror(code))
    }

    /// Creates an error from the current `errno`.
    static func errno(_ operation: String, _ subject: String) -> SystemCallError {
        SystemCallError(operation, subject, code: currentErrno())
    }

    public var description: String { "\(operation) \(subject): \(reason)" }
}

/// The calling thread's `errno`.
func currentErrno() -> Int32 {
    #if canImport(Glibc) || canImport(Musl) || canImport(Darwin)
        return errno
    #endif
}

/// Text from a NUL-terminated C character array.
func cArrayString(_ buffer: [CChar]) -> String {
    let bytes = buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }
    return String(decoding: bytes, as: UTF8.self)
}
