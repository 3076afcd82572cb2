/// The peripheral's GATT server, for a simulated SMP device advertising over HCI: a pure state
/// machine over a fixed database, fed the ATT PDUs of one connection.
///
/// The database: GAP service 0x1800 (handles 0x0001–0x0003, Device Name 0x2A00 readable at
/// 0x0003), GATT service 0x1801 (0x0004), the SMP service (0x0005–0x0008) with the SMP
/// characteristic (value at ``smpValueHandle``; write without response, write, notify) and its
/// Client Characteristic Configuration descriptor (``cccdHandle``).
///
/// Requests are answered as Core Vol 3 Part F 3.4 says, errors included; commands the server does
/// not know are ignored. PDUs of the peer's server role (responses, notifications, indications)
/// are ignored: this server never sends a request and never indicates.
public struct GATTServer: Sendable {
    /// What a received PDU produced.
    public struct Output: Sendable, Hashable {
        /// The PDU to send back (a response or an Error Response), if any.
        public var reply: [UInt8]?
        /// Bytes the client wrote to the SMP characteristic, for the SMP server (they may hold
        /// part of a frame, a frame, or several).
        public var smpData: [UInt8]?

        /// Creates an output.
        /// - Parameters:
        ///   - reply: the PDU to send back.
        ///   - smpData: the bytes written to the SMP characteristic.
        public init(reply: [UInt8]? = nil, smpData: [UInt8]? = nil) {
            self.reply = reply
            self.smpData = smpData
        }
    }

    /// The SMP characteristic's value handle (0x0007).
    public static let smpValueHandle = GATTDatabase.smpValueHandle
    /// The SMP characteristic's CCCD handle (0x0008).
    public static let cccdHandle = GATTDatabase.cccdHandle
    /// The longest value an attribute may have (Core Vol 3 Part F 3.2.9).
    static let maximumValueLength = 512

    let database: GATTDatabase
    /// The bearer's ATT_MTU: 23 until the client exchanges MTUs, then min(its, 498).
    public private(set) var mtu = ATTServerRole.defaultMTU
    /// Whether the client enabled notifications of the SMP characteristic (CCCD 0x0001).
    public private(set) var notificationsEnabled = false

    /// Creates the server of one connection.
    /// - Parameter deviceName: the GAP Device Name (UTF-8; at most 248 bytes are kept).
    public init(deviceName: String) {
        database = GATTDatabase(deviceName: Array(Array(deviceName.utf8).prefix(248)))
    }

    /// The longest value ``notification(_:)`` accepts: ATT_MTU − 3.
    public var maximumNotificationLength: Int { mtu - 3 }

    /// A PDU arrived from the client.
    /// - Parameter attPDU: the payload of an L2CAP PDU on the ATT channel.
    /// - Returns: what to send back and what was written for SMP; never fails (an invalid request
    ///   is answered with an Error Response, anything else invalid is ignored).
    public mutating func receive(_ attPDU: [UInt8]) -> Output {
        let pdu: ATTPDU
        do throws(HCIError) {
            pdu = try ATTPDU(bytes: attPDU)
        } catch {
            return Output(reply: ATTServerRole.answerUndecodable(attPDU))
        }
        switch pdu {
        case .exchangeMTURequest(let clientRxMTU):
            mtu = ATTServerRole.effectiveMTU(peer: clientRxMTU)
            return Output(reply: ATTPDU.exchangeMTUResponse(serverRxMTU: UInt16(ATTServerRole.preferredMTU)).encoded())
        case .writeRequest(let handle, let value):
            return write(handle, value)
        case .writeCommand(let handle, let value):
            let accepted = handle == Self.smpValueHandle && value.count <= Self.maximumValueLength
            return Output(smpData: accepted ? value : nil)
        case .unknown(let opcode, _):
            return Output(reply: opcode.isRequest ? ATTServerRole.error(opcode, 0, .requestNotSupported) : nil)
        default:
            return Output(reply: answerRead(pdu))
        }
    }

    /// A Handle Value Notification of the SMP characteristic.
    /// - Parameter value: the value, at most ``maximumNotificationLength`` bytes (the caller
    ///   splits longer SMP frames).
    /// - Returns: the PDU's bytes.
    /// - Throws: ``HCIError`` `.limitExceeded` for a longer value; `.protocolViolation` when the
    ///   client has not enabled notifications.
    public func notification(_ value: [UInt8]) throws(HCIError) -> [UInt8] {
        guard notificationsEnabled else {
            throw HCIError(.protocolViolation, "the client has not enabled notifications of the SMP characteristic")
        }
        guard value.count <= maximumNotificationLength else {
            throw HCIError(
                .limitExceeded,
                "a notification of \(value.count) bytes; ATT_MTU \(mtu) allows \(maximumNotificationLength)"
            )
        }
        return ATTPDU.handleValueNotification(handle: Self.smpValueHandle, value: value).encoded()
    }

    /// The attribute's value as a client reads it.
    func value(of attribute: GATTAttribute) -> [UInt8] {
        attribute.handle == Self.cccdHandle ? [notificationsEnabled ? 0x01 : 0x00, 0x00] : attribute.value
    }

    private mutating func write(_ handle: UInt16, _ value: [UInt8]) -> Output {
        let request = ATTOpcode.writeRequest
        guard let attribute = database.attribute(handle) else {
            return Output(reply: ATTServerRole.error(request, handle, .invalidHandle))
        }
        guard attribute.writable else { return Output(reply: ATTServerRole.error(request, handle, .writeNotPermitted)) }
        let written = ATTPDU.writeResponse.encoded()
        if handle == Self.cccdHandle {
            guard value.count == 2 else {
                return Output(reply: ATTServerRole.error(request, handle, .invalidAttributeValueLength))
            }
            // Only notifications: the characteristic does not indicate.
            guard value[1] == 0, value[0] <= 1 else {
                return Output(reply: ATTServerRole.error(request, handle, .valueNotAllowed))
            }
            notificationsEnabled = value[0] == 1
            return Output(reply: written)
        }
        guard value.count <= Self.maximumValueLength else {
            return Output(reply: ATTServerRole.error(request, handle, .invalidAttributeValueLength))
        }
        return Output(reply: written, smpData: value)
    }
}
