/// The server role's answers that every ATT bearer of this host gives, shared by ``GATTServer``
/// and by the central (``GATTClientSetup``, ``GATTClientChannel``), whose own database is empty.
enum ATTServerRole {
    /// The receive MTU this host offers, in both roles: room for an SMP frame of 495 bytes in one
    /// notification or write, as Zephyr's default `CONFIG_BT_L2CAP_TX_MTU` of 498 allows.
    static let preferredMTU = 498
    /// The MTU every ATT bearer starts with (Core Vol 3 Part F 3.2.8).
    static let defaultMTU = 23

    /// What a bearer does with a PDU of the peer's client role.
    enum Answer: Equatable {
        /// Send this PDU back.
        case reply([UInt8])
        /// Nothing to send (a command).
        case ignore
        /// The PDU is not for the server role: a response, a notification, an indication, a
        /// confirmation.
        case notForServer
    }

    /// The MTU of a bearer after an exchange: the smaller of the two receive MTUs, and never below
    /// the default (a peer's value below 23 is not valid and changes nothing).
    static func effectiveMTU(peer: UInt16) -> Int {
        max(defaultMTU, min(preferredMTU, Int(peer)))
    }

    /// The error that answers a request.
    static func error(_ request: ATTOpcode, _ handle: UInt16, _ code: ATTErrorCode) -> [UInt8] {
        ATTPDU.errorResponse(request: request, handle: handle, error: code).encoded()
    }

    /// The answer of a server with no attributes, the central's: its MTU, "attribute not found"
    /// to discovery, "invalid handle" to reads and writes, "request not supported" to unknown
    /// requests; a confirmation to an indication is left to the caller, which owns the value.
    static func answerAsEmptyServer(_ pdu: ATTPDU, mtu: inout Int) -> Answer {
        switch pdu {
        case .exchangeMTURequest(let clientRxMTU):
            mtu = effectiveMTU(peer: clientRxMTU)
            return .reply(ATTPDU.exchangeMTUResponse(serverRxMTU: UInt16(preferredMTU)).encoded())
        case .findInformationRequest(let range), .findByTypeValueRequest(let range, _, _),
            .readByTypeRequest(let range, _), .readByGroupTypeRequest(let range, _):
            return .reply(error(pdu.opcode, range.start, .attributeNotFound))
        case .readRequest(let handle), .readBlobRequest(let handle, _), .writeRequest(let handle, _):
            return .reply(error(pdu.opcode, handle, .invalidHandle))
        case .writeCommand:
            return .ignore
        case .unknown(let opcode, _):
            return opcode.isRequest ? .reply(error(opcode, 0x0000, .requestNotSupported)) : unknownAnswer(opcode)
        default:
            return .notForServer
        }
    }

    /// Unknown opcodes without a request's shape: a command is ignored; an unknown response is not
    /// for the server.
    private static func unknownAnswer(_ opcode: ATTOpcode) -> Answer {
        opcode.isCommand ? .ignore : .notForServer
    }

    /// The answer to bytes that do not decode: an Error Response for a request ("invalid handle"
    /// for a handle of 0 or a range that starts at 0 or after its end, else "invalid PDU"), `nil`
    /// for anything else (a command is never answered; a response is the client role's concern).
    static func answerUndecodable(_ bytes: [UInt8]) -> [UInt8]? {
        guard let first = bytes.first else { return nil }
        let opcode = ATTOpcode(rawValue: first)
        guard opcode.isRequest else { return nil }
        let word = { (index: Int) -> UInt16? in
            bytes.count > index + 1 ? UInt16(bytes[index]) | UInt16(bytes[index + 1]) << 8 : nil
        }
        let ranged: Set<ATTOpcode> = [
            .findInformationRequest, .findByTypeValueRequest, .readByTypeRequest, .readByGroupTypeRequest,
        ]
        if ranged.contains(opcode), let start = word(1), let end = word(3), start == 0 || start > end {
            return error(opcode, start, .invalidHandle)
        }
        if [.readRequest, .readBlobRequest, .writeRequest].contains(opcode), word(1) == 0 {
            return error(opcode, 0x0000, .invalidHandle)
        }
        return error(opcode, 0x0000, .invalidPDU)
    }
}
