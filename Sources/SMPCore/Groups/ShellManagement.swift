import Foundation

/// Shell management, group 9: run a shell command on the device and get its output.
///
/// Spec: `smp-protocol.md` §9 (command) and §3.4 (errors). The `smp` 4.2.0 package names code 2
/// `INVALID_FORMAT`; Zephyr calls it `COMMAND_TOO_LONG` and adds 3 `EMPTY_COMMAND`, which is what
/// this table follows.
public enum ShellManagement: SMPManagementGroup {
    /// Group 9.
    public static let group = SMPGroup.shell

    /// Shell group error names without the `SHELL_MGMT_ERR_` prefix, by value.
    public static let returnCodeNames = ["OK", "UNKNOWN", "COMMAND_TOO_LONG", "EMPTY_COMMAND"]

    /// This group's SMP v2 return code (`err.rc` when `err.group` is 9).
    public typealias ReturnCode = SMPGroupReturnCode<ShellManagement>

    /// Command 0, execute: run a command line in the device's shell.
    public struct Execute: SMPWriteRequest, Hashable {
        /// Never sent again automatically: the command does its work again.
        public var isIdempotent: Bool { false }

        public static var group: SMPGroup { .shell }
        public static var command: UInt8 { 0 }

        /// The command and its arguments, one string each (wire key `argv`, required, not empty:
        /// an empty list is refused with `EMPTY_COMMAND`).
        public var arguments: [String]

        /// Creates the request.
        /// - Parameter arguments: the command and its arguments.
        public init(arguments: [String]) { self.arguments = arguments }

        enum CodingKeys: String, CodingKey { case arguments = "argv" }

        /// The command's output and exit code.
        ///
        /// Current Zephyr sends the exit code as `ret`; with
        /// `CONFIG_MCUMGR_GRP_SHELL_LEGACY_RC_RETURN_CODE` (and before Zephyr 3.x) it sends it as
        /// `rc`, which a decoder would otherwise take for the error envelope.
        /// ``SMPResponseStatus/check(_:group:command:)`` lets an `rc` beside `o` through for this
        /// group, and this type reads it into ``returnCode`` when `ret` is absent. Encoding always
        /// writes `ret`.
        public struct Response: Codable, Sendable, Hashable {
            /// Everything the command printed (wire key `o`, always present).
            public var output: String
            /// The command's own return code, 0 for success (wire key `ret`; legacy `rc`; `nil`
            /// when the device sent neither).
            public var returnCode: Int?

            /// Creates a response.
            /// - Parameters:
            ///   - output: the printed text.
            ///   - returnCode: the command's return code.
            public init(output: String, returnCode: Int? = nil) {
                self.output = output
                self.returnCode = returnCode
            }

            enum CodingKeys: String, CodingKey {
                case output = "o"
                case returnCode = "ret"
                case legacyReturnCode = "rc"
            }

            /// Decodes the value from its wire form (see the type and field documentation).
            public init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                output = try container.decode(String.self, forKey: .output)
                returnCode =
                    try container.decodeIfPresent(Int.self, forKey: .returnCode)
                    ?? container.decodeIfPresent(Int.self, forKey: .legacyReturnCode)
            }

            /// Encodes the value in its wire form.
            public func encode(to encoder: any Encoder) throws {
                var container = encoder.container(keyedBy: CodingKeys.self)
                try container.encode(output, forKey: .output)
                try container.encodeIfPresent(returnCode, forKey: .returnCode)
            }
        }
    }
}

extension SMPGroupReturnCode where Group == ShellManagement {
    /// 0 OK: success.
    public static var ok: Self { Self(rawValue: 0) }
    /// 1 UNKNOWN: unknown error.
    public static var unknown: Self { Self(rawValue: 1) }
    /// 2 COMMAND_TOO_LONG: the command line does not fit the shell's buffer.
    public static var commandTooLong: Self { Self(rawValue: 2) }
    /// 3 EMPTY_COMMAND: no command was given.
    public static var emptyCommand: Self { Self(rawValue: 3) }
}
