// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    /// The client side of D-Bus's SASL handshake, as pure code: `EXTERNAL` with the process's uid,
    /// then `NEGOTIATE_UNIX_FD` when descriptors are wanted, then `BEGIN`.
    ///
    /// ```
    /// C: \0AUTH EXTERNAL 31303030\r\n      (the uid in ASCII, hex-encoded)
    /// S: OK 1234deadbeef…\r\n             (the server's GUID)
    /// C: NEGOTIATE_UNIX_FD\r\n
    /// S: AGREE_UNIX_FD\r\n                 (or ERROR …: no descriptors on this connection)
    /// C: BEGIN\r\n                         (messages follow)
    /// ```
    public struct DBusAuthentication: Sendable {
        /// What to do after a line from the server.
        public enum Action: Sendable, Hashable {
            /// Send these bytes and wait for the next line.
            case send([UInt8])
            /// Send these bytes (`BEGIN`); the connection then carries messages.
            case authenticated(send: [UInt8], serverGUID: String, unixFDs: Bool)
        }

        private enum State: Sendable {
            case waitingForOK
            case waitingForAgreement(guid: String)
            case done
        }

        /// The longest line accepted from the server.
        public static let maximumLineLength = 16_384

        private let uid: UInt32
        private let negotiateUnixFDs: Bool
        private var state = State.waitingForOK

        /// Creates a handshake.
        /// - Parameters:
        ///   - uid: the user id the server checks against the socket's credentials.
        ///   - negotiateUnixFDs: ask for descriptor passing.
        public init(uid: UInt32, negotiateUnixFDs: Bool) {
            self.uid = uid
            self.negotiateUnixFDs = negotiateUnixFDs
        }

        /// The first bytes to send: the NUL credentials byte and the `AUTH` command.
        public var initialBytes: [UInt8] {
            let hex = Array(String(uid).utf8).map { byte in
                let digits = Array("0123456789abcdef".utf8)
                return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0xF)]], as: UTF8.self)
            }.joined()
            return [0] + Array("AUTH EXTERNAL \(hex)\r\n".utf8)
        }

        /// Handles one line from the server (without its `\r\n`).
        /// - Parameter line: the line.
        /// - Returns: what to send.
        /// - Throws: ``DBusError`` `.authenticationFailed` when the server rejects us or answers
        ///   something the protocol does not allow at this point.
        public mutating func receive(line: String) throws(DBusError) -> Action {
            let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
            let command = words.first ?? ""
            switch state {
            case .waitingForOK:
                guard command == "OK", words.count == 2, Self.isGUID(words[1]) else {
                    state = .done
                    throw DBusError(.authenticationFailed, "the bus answered AUTH EXTERNAL with '\(Self.shown(line))'")
                }
                if negotiateUnixFDs {
                    state = .waitingForAgreement(guid: words[1])
                    return .send(Array("NEGOTIATE_UNIX_FD\r\n".utf8))
                }
                state = .done
                return .authenticated(send: Array("BEGIN\r\n".utf8), serverGUID: words[1], unixFDs: false)
            case .waitingForAgreement(let guid):
                state = .done
                if command == "AGREE_UNIX_FD" {
                    return .authenticated(send: Array("BEGIN\r\n".utf8), serverGUID: guid, unixFDs: true)
                }
                if command == "ERROR" {
                    return .authenticated(send: Array("BEGIN\r\n".utf8), serverGUID: guid, unixFDs: false)
                }
                throw DBusError(.authenticationFailed, "the bus answered NEGOTIATE_UNIX_FD with '\(Self.shown(line))'")
            case .done:
                throw DBusError(.authenticationFailed, "a line after the handshake ended: '\(Self.shown(line))'")
            }
        }

        /// 32 hex digits.
        private static func isGUID(_ text: String) -> Bool {
            text.utf8.count == 32 && text.utf8.allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        }

        /// A line as it may be shown in an error: printable ASCII, at most 80 characters.
        private static func shown(_ line: String) -> String {
            String(String(line.unicodeScalars.map { $0.isASCII && $0.value >= 32 ? Character($0) : "?" }).prefix(80))
        }
    }
#endif
