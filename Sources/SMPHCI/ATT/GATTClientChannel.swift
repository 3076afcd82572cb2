/// The central's SMP channel once ``GATTClientSetup`` is ready: writes go out as Write Commands
/// to the SMP characteristic, its notifications (and indications) come back as values.
///
/// The channel sends no requests, so no ATT transaction is ever outstanding and no response is
/// expected: any response is a protocol violation. The peer's requests are answered as a server
/// without attributes would; notifications of other handles are ignored.
public struct GATTClientChannel: Sendable, Hashable {
    /// What a received PDU produced.
    public struct Output: Sendable, Hashable {
        /// A value the SMP characteristic sent (part of an SMP frame, a frame, or several).
        public var value: [UInt8]?
        /// The PDU to send back (a confirmation, an answer to the peer's request), if any.
        public var reply: [UInt8]?

        /// Creates an output.
        /// - Parameters:
        ///   - value: the SMP characteristic's value.
        ///   - reply: the PDU to send back.
        public init(value: [UInt8]? = nil, reply: [UInt8]? = nil) {
            self.value = value
            self.reply = reply
        }
    }

    /// The bearer's ATT_MTU (23 or more; an Exchange MTU Request of the peer may change it).
    public private(set) var mtu: Int
    /// The SMP characteristic's value handle.
    public let valueHandle: UInt16
    /// The handle of its Client Characteristic Configuration descriptor.
    public let cccdHandle: UInt16

    /// Creates a channel; ``GATTClientSetup`` makes it.
    /// - Parameters:
    ///   - mtu: the bearer's ATT_MTU (values below 23 count as 23).
    ///   - valueHandle: the SMP characteristic's value handle.
    ///   - cccdHandle: its CCCD's handle.
    public init(mtu: Int, valueHandle: UInt16, cccdHandle: UInt16) {
        self.mtu = max(ATTServerRole.defaultMTU, mtu)
        self.valueHandle = valueHandle
        self.cccdHandle = cccdHandle
    }

    /// The longest value one Write Command carries: ATT_MTU − 3.
    public var maximumWriteLength: Int { mtu - 3 }

    /// A Write Command of the SMP characteristic.
    /// - Parameter value: at most ``maximumWriteLength`` bytes (the caller splits SMP frames).
    /// - Returns: the PDU's bytes.
    /// - Throws: ``HCIError`` `.limitExceeded` for a longer value.
    public func writeCommand(_ value: [UInt8]) throws(HCIError) -> [UInt8] {
        guard value.count <= maximumWriteLength else {
            throw HCIError(
                .limitExceeded,
                "a write of \(value.count) bytes; ATT_MTU \(mtu) allows \(maximumWriteLength)"
            )
        }
        return ATTPDU.writeCommand(handle: valueHandle, value: value).encoded()
    }

    /// A PDU arrived on the ATT channel.
    /// - Parameter attPDU: the payload of an L2CAP PDU on channel 0x0004.
    /// - Returns: the SMP value it carried and the reply to send, either or both or neither.
    /// - Throws: ``HCIError`` `.malformedPacket` for a PDU of the peer's server role that does not
    ///   decode; `.protocolViolation` for a response or a confirmation (nothing was asked).
    public mutating func receive(_ attPDU: [UInt8]) throws(HCIError) -> Output {
        let pdu: ATTPDU
        do throws(HCIError) {
            pdu = try ATTPDU(bytes: attPDU)
        } catch {
            if let reply = ATTServerRole.answerUndecodable(attPDU) { return Output(reply: reply) }
            if let first = attPDU.first, ATTOpcode(rawValue: first).isCommand { return Output() }
            throw error
        }
        switch ATTServerRole.answerAsEmptyServer(pdu, mtu: &mtu) {
        case .reply(let reply): return Output(reply: reply)
        case .ignore: return Output()
        case .notForServer: break
        }
        switch pdu {
        case .handleValueNotification(let handle, let value):
            return Output(value: handle == valueHandle ? value : nil)
        case .handleValueIndication(let handle, let value):
            return Output(value: handle == valueHandle ? value : nil, reply: ATTPDU.handleValueConfirmation.encoded())
        default:
            throw HCIError(.protocolViolation, "the device sent an ATT \(pdu.opcode), but no request is outstanding")
        }
    }
}
