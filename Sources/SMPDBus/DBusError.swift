// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPBytes

    /// A D-Bus failure of ours: bytes that break the specification, a limit exceeded, a refused
    /// authentication, a socket that cannot be opened or went away. (An error *reply* from another
    /// process is a ``DBusRemoteError``.)
    ///
    /// Equality compares ``code`` only.
    public struct DBusError: CodedError {
        /// What went wrong. An open set.
        public struct Code: Sendable, Hashable, CustomStringConvertible {
            private enum Kind: Sendable, Hashable {
                case malformedMessage, invalidSignature, invalidName, typeMismatch, limitExceeded
                case authenticationFailed, connectionFailed, disconnected, timeout, unsupported
            }
            private let kind: Kind

            /// Bytes that are not a D-Bus message: a bad header, padding, length, string or value.
            public static let malformedMessage = Code(kind: .malformedMessage)
            /// A type signature that breaks the specification's grammar or limits.
            public static let invalidSignature = Code(kind: .invalidSignature)
            /// An object path, interface, member, error or bus name that breaks the specification.
            public static let invalidName = Code(kind: .invalidName)
            /// A value that does not have the type its signature says (when writing, or reading a
            /// reply whose signature is not the one expected).
            public static let typeMismatch = Code(kind: .typeMismatch)
            /// A size or depth beyond the specification's limits (message 128 MiB, array 64 MiB,
            /// signature 255 bytes, nesting 32 + 32).
            public static let limitExceeded = Code(kind: .limitExceeded)
            /// The bus refused the SASL authentication, or answered it with something else.
            public static let authenticationFailed = Code(kind: .authenticationFailed)
            /// The bus socket could not be opened (no such socket, permission denied).
            public static let connectionFailed = Code(kind: .connectionFailed)
            /// The connection closed or failed while in use.
            public static let disconnected = Code(kind: .disconnected)
            /// No reply within the time allowed.
            public static let timeout = Code(kind: .timeout)
            /// Something this implementation does not do (an address transport other than `unix:`).
            public static let unsupported = Code(kind: .unsupported)

            public var description: String {
                switch kind {
                case .malformedMessage: "malformed message"
                case .invalidSignature: "invalid signature"
                case .invalidName: "invalid name"
                case .typeMismatch: "type mismatch"
                case .limitExceeded: "limit exceeded"
                case .authenticationFailed: "authentication failed"
                case .connectionFailed: "connection failed"
                case .disconnected: "disconnected"
                case .timeout: "timed out"
                case .unsupported: "unsupported"
                }
            }
        }

        /// What went wrong.
        public var code: Code
        /// Specific explanation: which field, which offset, which limit.
        public var message: String
        /// The underlying error, e.g. a system call's.
        public var cause: (any Error & Sendable)?

        /// Creates an error.
        /// - Parameters:
        ///   - code: what went wrong.
        ///   - message: a specific explanation.
        ///   - cause: the underlying error.
        public init(_ code: Code, _ message: String = "", cause: (any Error & Sendable)? = nil) {
            self.code = code
            self.message = message
            self.cause = cause
        }

        public var description: String { codedDescription(prefix: "D-Bus: ") }
    }

    /// An error reply from another process: its D-Bus error name (e.g.
    /// `org.bluez.Error.NotPermitted`) and the message it carried, if any.
    public struct DBusRemoteError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The error name, e.g. `org.freedesktop.DBus.Error.AccessDenied`.
        public var name: String
        /// The first string argument of the error, if there was one.
        public var message: String

        /// Creates an error.
        /// - Parameters:
        ///   - name: the D-Bus error name.
        ///   - message: the explanation.
        public init(name: String, message: String = "") {
            self.name = name
            self.message = message
        }

        public var description: String { message.isEmpty ? name : "\(name): \(message)" }
    }
#endif
